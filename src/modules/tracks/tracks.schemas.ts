import { Type } from '@sinclair/typebox';
import { Nullable } from '../../lib/schemas.js';
import { Device } from '../devices/index.js';

export const FieldTerminal = Type.Object(
  {
    device_id: Type.String({ description: "the beacons' meta.device_id" }),
    user_id: Type.Integer(),
    user_name: Type.String(),
    org_id: Type.Integer(),
    livemode: Type.Boolean(),
    active: Type.Boolean({ description: 'beaconing now' }),
    last_position: Nullable(Type.Object({ lat: Nullable(Type.Number()), lng: Nullable(Type.Number()), accuracy: Nullable(Type.Number()), recorded_at: Type.String() })),
    last_seen_at: Nullable(Type.String()),
  },
  { title: 'FieldTerminal', description: 'A field terminal: a device known by its beacons (meta.device_id) or its stored track, not a registered tracker app' },
);

export const AllDevices = Type.Object(
  { devices: Type.Array(Device, { description: 'tracker apps' }), field_terminals: Type.Array(FieldTerminal) },
  { title: 'DeviceList' },
);

export const TrackParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, description: "a tracker app's id, or any device's device_id" }) });
export const TrackQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ description: 'ISO-8601; default `to` minus 24 hours' })),
    to: Type.Optional(Type.String({ description: 'ISO-8601; default now; at most 31 days after `from`' })),
  },
  { additionalProperties: false },
);

export const TrackPointSchema = Type.Object({ lat: Type.Number(), lng: Type.Number(), accuracy: Nullable(Type.Number()), at: Type.String() });
export const TrackResponse = Type.Object(
  {
    device_id: Type.String(),
    user_id: Type.Integer(),
    from: Type.String(),
    to: Type.String(),
    total_points: Type.Integer({ description: 'positions stored in the range, before thinning' }),
    stops: Type.Integer({ description: 'stops found (>= 3 minutes within 50 m); their first and last points are always kept' }),
    points: Type.Array(TrackPointSchema, { maxItems: 5000 }),
  },
  { title: 'Track' },
);
