import { Type } from '@sinclair/typebox';

export const DeleteMeBody = Type.Object(
  {
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "the account's password" })),
    code: Type.Optional(
      Type.String({ pattern: '^[0-9]{6}$', description: 'instead of the password (accounts without one): a sign-in code from POST /v1/auth/magic-link' }),
    ),
  },
  { additionalProperties: false },
);

/** Rows of the export: every field of the stored record except secrets (docs/api.md lists them). */
const Rows = Type.Array(Type.Object({}, { additionalProperties: true }));

export const ExportResponse = Type.Object({
  format: Type.String(),
  exported_at: Type.String(),
  profile: Type.Object({}, { additionalProperties: true }),
  memberships: Rows,
  teams: Rows,
  api_keys: Rows,
  sessions: Rows,
  devices: Rows,
  push_subscriptions: Rows,
  calendars: Rows,
  incidents: Rows,
  replies: Rows,
  signals: Rows,
  uploads: Type.Array(Type.String(), { description: 'URLs of the photos attached to your signals' }),
  event_types: Rows,
  bookings: Type.Object({ hosted: Rows, attended: Rows }),
  audit: Rows,
  tracks: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'your positions kept as tracks by orgs that keep them: {org_id, livemode, device_id, lat, lng, accuracy, at}' }),
  inbound_emails: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'emails Muster received from your (proven) address, each as received (`raw_base64`, null once retention removed it)' }),
});

export const DeletedMe = Type.Object({ deleted: Type.Literal(true) });
export const MemberSignalsDeleted = Type.Object({ user_id: Type.Integer(), deleted: Type.Integer({ description: 'signals removed' }) });
