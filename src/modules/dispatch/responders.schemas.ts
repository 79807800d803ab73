import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../lib/schemas.js';

export const RespondersQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 20 }),
  within_m: Type.Optional(Type.Number({ minimum: 1, maximum: 20_100_000, description: 'only responders within this many metres of the incident' })),
});
export type RespondersQuery = Static<typeof RespondersQuery>;

export const Responder = Type.Object({
  user_id: Type.Integer(),
  user_name: Type.String(),
  device_id: Nullable(Type.String()),
  lat: Type.Number(),
  lng: Type.Number(),
  last_seen_at: Type.String(),
  distance_m: Nullable(Type.Integer({ description: 'great-circle metres; null when the incident has no position' })),
  open_assignments: Type.Integer({ description: 'open and in-progress incidents assigned to them in this org and mode' }),
}, { title: 'Responder', description: 'A member with a live position, and the distance to the incident' });
export type Responder = Static<typeof Responder>;
export const ResponderList = Type.Object({ responders: Type.Array(Responder) }, { title: 'ResponderList' });
