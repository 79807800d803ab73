import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../lib/schemas.js';
import { Lat, Lng } from '../incidents/index.js';

export const ProgressBody = Type.Object({
  state: StringEnum(['en_route', 'on_scene']),
  lat: Type.Optional(Lat),
  lng: Type.Optional(Lng),
  accuracy: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'metres' })),
});
export type ProgressBody = Static<typeof ProgressBody>;

const Minutes = Nullable(Type.Integer({ minimum: 1, maximum: 1440, description: 'minutes; null: never escalates' }));
export const AckTimeouts = Type.Object({ urgent: Minutes, high: Minutes });
const NoticeMinutes = Nullable(Type.Integer({ minimum: 1, maximum: 1440, description: 'minutes before a shift that its person gets a push and an email (default 15); null: no handoff notices' }));
const DefaultPolicy = Nullable(
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'the escalation policy of field alerts, email and API incidents, and of integrations without their own; null: the built-in escalation (owners and admins after the timeouts)' }),
);
export const DispatchSettings = Type.Object(
  { ack_timeout_minutes: AckTimeouts, handoff_notice_minutes: NoticeMinutes, default_escalation_policy_id: DefaultPolicy },
  { title: 'DispatchSettings', description: "An org's acknowledgement timeouts and on-call handoff notices" },
);
export const UpdateDispatchSettings = Type.Object(
  {
    ack_timeout_minutes: Type.Optional(Type.Object({ urgent: Type.Optional(Minutes), high: Type.Optional(Minutes) }, { minProperties: 1 })),
    handoff_notice_minutes: Type.Optional(NoticeMinutes),
    default_escalation_policy_id: Type.Optional(DefaultPolicy),
  },
  { minProperties: 1 },
);
