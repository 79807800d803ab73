import type { AppContext } from '../../context.js';
import type { Flag } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { CHANNELS } from '../../events/channels.js';
import type { EventCatalog } from '../streams/index.js';

type IncidentEvents = EventCatalog[typeof CHANNELS.incidents];

/** Broadcasts an event of the incident's org and mode on the incident stream when `tx` commits (its type and payload: the event catalog). */
export function publishIncident<T extends keyof IncidentEvents>(ctx: AppContext, tx: Tx, i: { org_id: number; livemode: Flag }, type: T, payload: IncidentEvents[T]): void {
  ctx.events.publish(tx, { channel: CHANNELS.incidents, orgId: i.org_id, mode: i.livemode === 1 ? 'live' : 'test', type, payload });
}
