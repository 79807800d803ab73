import type { AppContext } from '../../context.js';

import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { findAckTimeouts, saveAckTimeouts, type AckTimeouts } from '../incidents/index.js';
import { orgAccess } from '../orgs/index.js';
import { findDefaultPolicy, findHandoffMinutes, saveDefaultPolicy, saveHandoffMinutes } from './settings.repository.js';

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
  await ctx.escalation.checkPolicyRef(ctx.db, org.id, input.default_escalation_policy_id, 'default_escalation_policy_id');
  return ctx.transaction(async (tx) => {
    const now = iso(ctx.clock.now());
    const next = { ...(await findAckTimeouts(tx.db, org.id)), ...input.ack_timeout_minutes };
    await saveAckTimeouts(tx.db, org.id, next, now);
    if (input.handoff_notice_minutes !== undefined) await saveHandoffMinutes(tx.db, org.id, input.handoff_notice_minutes, now);
    if (input.default_escalation_policy_id !== undefined) await saveDefaultPolicy(tx.db, org.id, input.default_escalation_policy_id, now);
    // Every instance's memory of what new incidents take from these settings (incidents' defaults-cache.ts), after the commit.
    ctx.events.endAccess({ dispatchOf: org.id }, tx);
    return {
      ack_timeout_minutes: next,
      handoff_notice_minutes: (await findHandoffMinutes(tx.db, [org.id])).get(org.id) ?? null,
      default_escalation_policy_id: await findDefaultPolicy(tx.db, org.id),
    };
  });
}
