import type { AppContext } from '../../context.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { shiftsStarting } from '../oncall/index.js';
import { findUserById } from '../users/index.js';
import { queueMessage, subscribersOf } from './hook.js';
import { claimShiftStart, orgsWantingShiftStarts } from './subscriptions.repository.js';

/** A shift begun this long ago is still announced (a job run missed, an instance restarting), as the handoff notices do. */
export const LATE_START = 10 * MINUTE;

/**
 * `oncall.shift_started`, run by the job scheduler every minute: for the orgs with a subscription
 * to it, every person's time on call that began in the last ten minutes. Exactly once per shift
 * across instances and runs: its row in `subscription_shift_starts` is inserted (ON CONFLICT DO
 * NOTHING) in the transaction that queues the deliveries, and only the one that inserted it
 * queues them. Schedules belong to no mode: subscriptions of both modes receive it.
 */
export async function sendShiftStarts(ctx: AppContext): Promise<number> {
  const orgIds = await orgsWantingShiftStarts(ctx.db);
  if (orgIds.length === 0) return 0;
  const now = ctx.clock.nowMs();
  let sent = 0;
  for (const s of await shiftsStarting(ctx, orgIds, now - LATE_START, now)) {
    const user = await findUserById(ctx.db, s.userId);
    const start = iso(new Date(s.start));
    const queued = await ctx.transaction(async (tx) => {
      if (!(await claimShiftStart(tx.db, { schedule_id: s.scheduleId, user_id: s.userId, shift_start: start, created_at: iso(new Date(now)) }))) return false;
      for (const livemode of [1, 0] as const) {
        const subs = await subscribersOf(ctx, tx.db, s.orgId, livemode, 'oncall.shift_started');
        if (subs.length === 0) continue;
        await queueMessage(ctx, tx, subs, {
          type: 'oncall.shift_started',
          at: start,
          schedule: { id: s.scheduleId, name: s.scheduleName },
          user: { id: s.userId, name: user?.name ?? `user ${s.userId}` },
          start,
          end: iso(new Date(s.end)),
          links: { schedule: `${ctx.config.publicUrl}/app/oncall` },
        });
      }
      return true;
    });
    if (queued) sent++;
  }
  return sent;
}
