import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../lib/schemas.js';
import { Lat, Lng } from '../incidents/incidents.schemas.js';

export const ProgressBody = Type.Object({
  state: StringEnum(['en_route', 'on_scene']),
  lat: Type.Optional(Lat),
  lng: Type.Optional(Lng),
  accuracy: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'metres' })),
});
export type ProgressBody = Static<typeof ProgressBody>;

const Minutes = Nullable(Type.Integer({ minimum: 1, maximum: 1440, description: 'minutes; null: never escalates' }));
export const AckTimeouts = Type.Object({ urgent: Minutes, high: Minutes });
export const DispatchSettings = Type.Object({ ack_timeout_minutes: AckTimeouts }, { title: 'DispatchSettings', description: "An org's acknowledgement timeouts" });
export const UpdateDispatchSettings = Type.Object({
  ack_timeout_minutes: Type.Object({ urgent: Type.Optional(Minutes), high: Type.Optional(Minutes) }, { minProperties: 1 }),
});
