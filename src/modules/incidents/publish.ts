import type { AppContext } from '../../context.js';
import type { Flag } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';

/** The incident stream's channel: every event about an incident goes out on it, once its transaction commits. */
export const CHANNEL = 'incidents';

/** Broadcasts an event of the incident's org and mode on the incident stream when `tx` commits. */
export function publishIncident(ctx: AppContext, tx: Tx, i: { org_id: number; livemode: Flag }, type: string, payload: unknown): void {
  ctx.events.publish(tx, { channel: CHANNEL, orgId: i.org_id, mode: i.livemode === 1 ? 'live' : 'test', type, payload });
}
