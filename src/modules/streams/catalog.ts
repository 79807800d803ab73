import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CHANNELS, type Channel } from '../../events/channels.js';
import { Nullable } from '../../lib/schemas.js';
import { Incident, Reply, TimelineEvent } from '../incidents/index.js';
import { Signal } from '../signals/index.js';

/**
 * The event catalog: channel -> event type -> payload schema. `ctx.events.publish` is typed from it
 * (EventCatalog), and each stream's OpenAPI event union (and so the generated client) is built from
 * it, so an event type published is an event type described.
 */

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

const BeaconOff = Type.Object({ device_id: Nullable(Type.String()), user_id: Type.Integer(), org_id: Type.Integer() });

export const SitePassage = Type.Object(
  {
    site_id: Type.Integer(),
    site_name: Type.String(),
    org_id: Type.Integer(),
    user_id: Type.Integer(),
    device_id: Nullable(Type.String({ description: 'the device’s meta.device_id; null for a user’s own beacon' })),
    lat: Type.Number(),
    lng: Type.Number(),
    accuracy: Nullable(Type.Number()),
    at: Type.String({ description: 'when the fix that decided it was taken' }),
  },
  { title: 'SitePassage', description: 'A device entering or leaving a site (geofence)' },
);

interface EventSpec {
  payload: TSchema;
  description: string;
}

const event = <T extends TSchema>(payload: T, description: string) => ({ payload, description });

export const CATALOG = {
  [CHANNELS.incidents]: {
    'incident.created': event(Incident, 'An incident was opened'),
    'incident.updated': event(Incident, 'An incident changed (status, priority, assignee, acknowledgement...)'),
    'incident.assigned': event(Incident, 'An incident got an assignee'),
    'incident.reply': event(Reply, 'A reply was added'),
    'incident.timeline': event(TimelineEvent, 'An entry was added to an incident’s timeline (GET /v1/tickets/{id}/timeline)'),
  },
  [CHANNELS.signals]: {
    'signal.beacon': event(BeaconPosition, 'A device moved'),
    'signal.capture': event(Signal, 'A photo was posted'),
    'signal.note': event(Signal, 'A note was posted'),
    'signal.checkin': event(Signal, 'A check-in was posted'),
    'signal.alert': event(Signal, 'An alert was posted'),
    beacon_off: event(BeaconOff, 'A device stopped beaconing'),
    'site.enter': event(SitePassage, 'A device entered a site'),
    'site.exit': event(SitePassage, 'A device left a site'),
  },
} as const satisfies Record<Channel, Record<string, EventSpec>>;

type Specs = typeof CATALOG;

/** Channel -> event type -> payload, as TypeScript sees them: what `ctx.events.publish` accepts. */
export type EventCatalog = { [C in Channel]: { [T in keyof Specs[C]]: Specs[C][T] extends { payload: infer P extends TSchema } ? Static<P> : never } };

const Connected = Type.Object(
  { type: Type.Literal('connected'), org_ids: Type.Array(Type.Integer(), { description: 'the orgs whose events this stream carries' }) },
  { title: 'StreamConnected', description: 'The first event of every stream' },
);
const Resync = Type.Object(
  { type: Type.Literal('resync') },
  { title: 'StreamResync', description: 'The Last-Event-ID is older than the replay keeps: fetch the lists again, then go on live' },
);

/** What one `data:` line of a channel's stream carries: the stream's own events, then every catalog entry of the channel. */
function streamEvents(channel: Channel, title: string, what: string) {
  const entries = Object.entries(CATALOG[channel]) as [string, EventSpec][];
  return Type.Union(
    [Connected, Resync, ...entries.map(([type, e]) => Type.Object({ type: Type.Literal(type), payload: e.payload }, { description: e.description }))],
    { title, description: `The JSON of one \`data:\` line of the ${what} stream` },
  );
}

/**
 * What one `data:` line of a live stream carries (Server-Sent Events; `id:` lines allow resuming
 * with Last-Event-ID, `:` lines are heartbeats). Documented as the `text/event-stream` content
 * of each stream route, so generated clients get the event types.
 */
export const IncidentStreamEvent = streamEvents(CHANNELS.incidents, 'IncidentStreamEvent', 'incident');
export const SignalStreamEvent = streamEvents(CHANNELS.signals, 'SignalStreamEvent', 'signal');

/** The 200 answer of a stream route. */
export const eventStream = (schema: TSchema) => ({
  description: 'A Server-Sent Events stream: `retry:`, then `id:` and `data:` lines (one JSON event each), heartbeat comments every 25 s',
  content: { 'text/event-stream': { schema } },
});
