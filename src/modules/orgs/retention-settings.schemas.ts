import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../lib/schemas.js';

const Days = (what: string) =>
  Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 36_500, description: `days ${what} are kept; null keeps them forever` })));

/** `retention` in PATCH /v1/orgs/:org_slug (owners): only the kinds given change. */
export const RetentionPatch = Type.Object(
  {
    signals_days: Days('signals (positions, notes, captures)'),
    audit_days: Days('audit log entries'),
    uploads_days: Days("captures' uploaded photos (the signal stays, without its image)"),
    closed_incidents_days: Days('resolved and closed incidents (with their replies and timeline)'),
    inbound_emails_days: Days('received emails (the message itself; a record of one that opened nothing goes whole)'),
    tracks_days: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 3650, description: 'days each position of a device is kept as its track; 0 (the default) keeps no track' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type RetentionPatch = Static<typeof RetentionPatch>;

const Kept = Nullable(Type.Integer());
export const RetentionValues = Type.Object({ signals_days: Kept, audit_days: Kept, uploads_days: Kept, closed_incidents_days: Kept, inbound_emails_days: Kept });

export const RetentionResponse = Type.Object({
  retention: RetentionValues,
  tracks_days: Type.Integer({ description: 'days positions are kept as tracks; 0: no track is kept' }),
  instance_default: RetentionValues,
});
