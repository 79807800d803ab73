import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, Priority } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { orgAccess } from '../orgs/access.js';
import { findAckTimeouts, saveAckTimeouts, type AckTimeouts } from './settings.repository.js';

/** The acknowledgement timeout of a priority in this org, in minutes; null when it never escalates. */
export function timeoutOf(t: AckTimeouts, priority: Priority): number | null {
  return priority === 'urgent' ? t.urgent : priority === 'high' ? t.high : null;
}

/** When an unacknowledged incident of this priority, whose clock starts at `from`, first escalates (null: never). */
export async function ackDeadline(db: Kysely<DB>, orgId: number, priority: Priority, from: Date): Promise<string | null> {
  // Only urgent and high incidents escalate (timeoutOf): the others need no look-up of the setting.
  if (priority !== 'urgent' && priority !== 'high') return null;
  const minutes = timeoutOf(await findAckTimeouts(db, orgId), priority);
  return minutes === null ? null : iso(new Date(from.getTime() + minutes * MINUTE));
}

export async function getDispatchSettings(ctx: AppContext, actor: Actor, slug: string) {
  const { org } = await orgAccess(ctx, actor, { slug });
  return { ack_timeout_minutes: await findAckTimeouts(ctx.db, org.id) };
}

/**
 * Org admins and owners change the timeouts. A change applies to the next step each incident
 * reaches (the sweeper reads the setting when a step falls due), not retroactively.
 */
export async function updateDispatchSettings(ctx: AppContext, actor: Actor, slug: string, input: { ack_timeout_minutes: Partial<AckTimeouts> }) {
  const { org } = await orgAccess(ctx, actor, { slug }, { role: 'admin', write: true });
  return ctx.transaction(async (tx) => {
    const next = { ...(await findAckTimeouts(tx.db, org.id)), ...input.ack_timeout_minutes };
    await saveAckTimeouts(tx.db, org.id, next, iso(ctx.clock.now()));
    return { ack_timeout_minutes: next };
  });
}
