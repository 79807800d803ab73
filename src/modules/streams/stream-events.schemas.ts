import { Type, type TSchema } from '@sinclair/typebox';
import { Nullable } from '../../lib/schemas.js';
import { Incident, Reply, TimelineEvent } from '../incidents/index.js';
import { Signal } from '../signals/signals.schemas.js';

/**
 * What one `data:` line of a live stream carries (Server-Sent Events; `id:` lines allow resuming
 * with Last-Event-ID, `:` lines are heartbeats). Documented as the `text/event-stream` content
 * of each stream route, so generated clients get the event types.
 */
const event = <T extends TSchema>(type: string, payload: T, description: string) =>
  Type.Object({ type: Type.Literal(type), payload }, { description });

const Connected = Type.Object(
  { type: Type.Literal('connected'), org_ids: Type.Array(Type.Integer(), { description: 'the orgs whose events this stream carries' }) },
  { title: 'StreamConnected', description: 'The first event of every stream' },
);
const Resync = Type.Object(
  { type: Type.Literal('resync') },
  { title: 'StreamResync', description: 'The Last-Event-ID is older than the replay keeps: fetch the lists again, then go on live' },
);

export const IncidentStreamEvent = Type.Union(
  [
    Connected,
    Resync,
    event('incident.created', Incident, 'An incident was opened'),
    event('incident.updated', Incident, 'An incident changed (status, priority, assignee, acknowledgement...)'),
    event('incident.assigned', Incident, 'An incident got an assignee'),
    event('incident.reply', Reply, 'A reply was added'),
    event('incident.timeline', TimelineEvent, 'An entry was added to an incident’s timeline (GET /v1/tickets/{id}/timeline)'),
  ],
  { title: 'IncidentStreamEvent', description: 'The JSON of one `data:` line of the incident stream' },
);

export const BeaconPosition = Type.Object(
  {
    user_id: Type.Integer(),
    user_name: Type.String(),
    org_id: Type.Integer(),
    lat: Nullable(Type.Number()),
    lng: Nullable(Type.Number()),
    accuracy: Nullable(Type.Number()),
    meta: Type.Object({}, { additionalProperties: true }),
    created_at: Type.String(),
  },
  { title: 'BeaconPosition', description: 'A live position (beacons are broadcast, not stored)' },
);

export const SignalStreamEvent = Type.Union(
  [
    Connected,
    Resync,
    event('signal.beacon', BeaconPosition, 'A device moved'),
    event('signal.capture', Signal, 'A photo was posted'),
    event('signal.note', Signal, 'A note was posted'),
    event('signal.checkin', Signal, 'A check-in was posted'),
    event('signal.alert', Signal, 'An alert was posted'),
    event('beacon_off', Type.Object({ device_id: Nullable(Type.String()), user_id: Type.Integer(), org_id: Type.Integer() }), 'A device stopped beaconing'),
  ],
  { title: 'SignalStreamEvent', description: 'The JSON of one `data:` line of the signal stream' },
);

/** The 200 answer of a stream route. */
export const eventStream = (schema: TSchema) => ({
  description: 'A Server-Sent Events stream: `retry:`, then `id:` and `data:` lines (one JSON event each), heartbeat comments every 25 s',
  content: { 'text/event-stream': { schema } },
});
