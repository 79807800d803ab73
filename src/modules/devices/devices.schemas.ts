import { Type } from '@sinclair/typebox';
import { Nullable } from '../../lib/schemas.js';
import { DeviceId } from '../signals/index.js';

const OrgId = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const DeviceName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });

export const CreateDeviceBody = Type.Object({
  name: DeviceName,
  org_id: Type.Optional({ ...OrgId, description: "default: the caller's primary org" }),
  device_id: Type.Optional({ ...DeviceId, description: 'default: a new dev-xxxxxx-xxxxxxxx' }),
});
export const UpdateDeviceBody = Type.Object({ name: Type.Optional(DeviceName), org_id: Type.Optional(OrgId) }, { minProperties: 1 });

const Urls = {
  osmand_url: Type.String({ description: 'OsmAnd protocol (Traccar Client, OsmAnd, hardware trackers): GET or POST' }),
  owntracks_url: Type.String({ description: 'OwnTracks HTTP mode' }),
  gpslogger_url: Type.String({ description: "GPSLogger's custom URL, with its placeholders" }),
  traccar_json_url: Type.String({ description: 'the JSON body newer Traccar Client versions POST' }),
};

export const Device = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  user_id: Type.Integer(),
  user_name: Type.String(),
  org_id: Type.Integer(),
  device_id: Type.String(),
  livemode: Type.Boolean(),
  ...Urls,
  active: Type.Boolean({ description: 'beaconing now' }),
  last_position: Nullable(Type.Object({ lat: Nullable(Type.Number()), lng: Nullable(Type.Number()), accuracy: Nullable(Type.Number()), recorded_at: Type.String() })),
  last_seen_at: Nullable(Type.String()),
  created_at: Type.String(),
}, { title: 'Device', description: 'A registered tracker app' });
export const CreatedDevice = Type.Object({
  ...Device.properties,
  token: Type.String({ description: 'The secret. Shown once: only its hash is stored. In every URL above.' }),
  owntracks_config: Type.Object({}, { additionalProperties: true, description: "OwnTracks' configuration (.otrc), for its QR code or file import" }),
}, { title: 'CreatedDevice', description: 'A new device: its token is shown this once' });
export const RevokedDevice = Type.Object({ id: Type.Integer(), revoked: Type.Boolean() });
