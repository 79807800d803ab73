import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PagingQuery, StringEnum } from '../../lib/schemas.js';
import { Lat, Lng } from '../incidents/index.js';

export const SignalTypeSchema = StringEnum(['beacon', 'capture', 'note', 'checkin', 'alert']);

export const DeviceId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._:-]+$', description: 'e.g. dev-1a2b3c-4d5e6f7g' });

export const CreateSignalBody = Type.Object({
  type: SignalTypeSchema,
  lat: Type.Optional(Lat),
  lng: Type.Optional(Lng),
  accuracy: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'metres' })),
  note: Type.Optional(Type.String({ maxLength: 5000 })),
  // http(s) only: a `javascript:` or `data:` URL would be stored and shown as a link (issue 14, item 12).
  image_url: Type.Optional(Type.String({ maxLength: 2048, format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]', description: 'an http(s) URL: usually one from POST /v1/upload; other hosts are allowed' })),
  ticket_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'an incident of the same org and mode' })),
  org_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "default: the caller's primary org" })),
  meta: Type.Optional(Type.Object({ device_id: Type.Optional(DeviceId) }, { additionalProperties: true, description: 'free-form, at most 4 KB as JSON' })),
  recorded_at: Type.Optional(Type.String({ format: 'date-time', description: 'when the device took the reading (an offline replay); default now' })),
});
export type CreateSignalBody = Static<typeof CreateSignalBody>;

export const Signal = Type.Object({
  Id: Nullable(Type.Integer({ description: 'null for beacons, which are not stored' })),
  type: SignalTypeSchema,
  user_id: Type.Integer(),
  user_name: Type.String(),
  org_id: Type.Integer(),
  livemode: Type.Boolean(),
  lat: Nullable(Type.Number()),
  lng: Nullable(Type.Number()),
  accuracy: Nullable(Type.Number()),
  note: Nullable(Type.String()),
  image_url: Nullable(Type.String()),
  ticket_id: Nullable(Type.Integer()),
  meta: Type.Object({}, { additionalProperties: true }),
  created_at: Type.String(),
}, { title: 'Signal', description: 'A signal from the field' });
export type Signal = Static<typeof Signal>;

export const ListSignalsQuery = Type.Object({
  ...PagingQuery.properties,
  type: Type.Optional(StringEnum(['beacon', 'capture', 'note', 'checkin', 'alert'], { description: 'beacons are never stored: `beacon` lists nothing' })),
  org_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
});
export type ListSignalsQuery = Static<typeof ListSignalsQuery>;
export const SignalList = Type.Object({ signals: Type.Array(Signal), page: Type.Integer(), limit: Type.Integer(), has_more: Type.Boolean() }, { title: 'SignalList' });

export const BeaconOffBody = Type.Object({ device_id: Type.Optional(DeviceId) });

export const Beacon = Type.Object({
  device_id: Nullable(Type.String()),
  device_name: Nullable(Type.String({ description: "the name of the registered tracker device (GET /v1/devices) whose device_id this is, when the caller's orgs hold one" })),
  user_id: Type.Integer(),
  user_name: Type.String(),
  org_id: Type.Integer(),
  lat: Nullable(Type.Number()),
  lng: Nullable(Type.Number()),
  accuracy: Nullable(Type.Number()),
  meta: Type.Object({}, { additionalProperties: true }),
  created_at: Type.String({ description: 'when the position was taken' }),
  last_seen_at: Type.String(),
}, { title: 'Beacon', description: 'The last known position of an active device' });
export const BeaconList = Type.Object({ beacons: Type.Array(Beacon) }, { title: 'BeaconList' });

export const AuditQuery = Type.Object({ ...PagingQuery.properties, org_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
export const AuditEntry = Type.Object({
  id: Type.Integer(),
  action: Type.String(),
  user_id: Nullable(Type.Integer()),
  org_id: Type.Integer(),
  device_id: Nullable(Type.String()),
  created_at: Type.String(),
  meta: Type.Object({}, { additionalProperties: true }),
}, { title: 'AuditEntry' });
export const AuditList = Type.Object({ entries: Type.Array(AuditEntry), page: Type.Integer(), limit: Type.Integer(), has_more: Type.Boolean() }, { title: 'AuditList' });

export const AlertReachQuery = Type.Object({ org_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "default: the caller's primary org" })) });
export const AlertReach = Type.Object(
  {
    org_id: Type.Integer(),
    org_name: Type.String(),
    livemode: Type.Boolean({ description: 'false: test mode, where pushes and emails are recorded, never sent' }),
    members: Type.Integer({ description: 'every member of the org is told' }),
    by_push: Type.Integer({ description: 'members with notifications turned on in a browser' }),
    by_email: Type.Integer({ description: 'the others, by email' }),
    you: StringEnum(['push', 'email'], { description: "how the caller would be told of an alert to this org" }),
  },
  { title: 'AlertReach', description: 'Who an alert to this org would reach now, and by which channel' },
);
