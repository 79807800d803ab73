import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, Priority } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { orgAccess } from '../orgs/access.js';
import { checkPolicyRef } from '../paging/index.js';
import { findAckTimeouts, findDefaultPolicy, findHandoffMinutes, saveAckTimeouts, saveDefaultPolicy, saveHandoffMinutes, type AckTimeouts } from './settings.repository.js';

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
  const notice = (await findHandoffMinutes(ctx.db, [org.id])).get(org.id) ?? null;
  return { ack_timeout_minutes: await findAckTimeouts(ctx.db, org.id), handoff_notice_minutes: notice, default_escalation_policy_id: await findDefaultPolicy(ctx.db, org.id) };
}

/**
 * Org admins and owners change the timeouts and the handoff notices. A change applies to the next
 * step each incident reaches (the sweeper reads the setting when a step falls due), and to the
 * next notice, not retroactively.
 */
export async function updateDispatchSettings(
  ctx: AppContext,
  actor: Actor,
  slug: string,
  input: { ack_timeout_minutes?: Partial<AckTimeouts> | undefined; handoff_notice_minutes?: number | null | undefined; default_escalation_policy_id?: number | null | undefined },
) {
  const { org } = await orgAccess(ctx, actor, { slug }, { role: 'admin', write: true });
  await checkPolicyRef(ctx.db, org.id, input.default_escalation_policy_id, 'default_escalation_policy_id');
  return ctx.transaction(async (tx) => {
    const now = iso(ctx.clock.now());
    const next = { ...(await findAckTimeouts(tx.db, org.id)), ...input.ack_timeout_minutes };
    await saveAckTimeouts(tx.db, org.id, next, now);
    if (input.handoff_notice_minutes !== undefined) await saveHandoffMinutes(tx.db, org.id, input.handoff_notice_minutes, now);
    if (input.default_escalation_policy_id !== undefined) await saveDefaultPolicy(tx.db, org.id, input.default_escalation_policy_id, now);
    return {
      ack_timeout_minutes: next,
      handoff_notice_minutes: (await findHandoffMinutes(tx.db, [org.id])).get(org.id) ?? null,
      default_escalation_policy_id: await findDefaultPolicy(tx.db, org.id),
    };
  });
}
