// Handoff notices: a push and an email to a person `handoff_notice_minutes` (an org setting beside
// the dispatch settings) before they go on call, in their own time zone's words. Run by the job
// scheduler every minute. Exactly once per shift across any number of instances: the notice's
// row in `oncall_handoff_notices` (schedule, person, start) is inserted with ON CONFLICT DO NOTHING
// in the same transaction as the outbox rows, and only the transaction that inserted it queues them.
import type { AppContext } from '../../context.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { queueEmail } from '../deliveries/index.js';
import { queueDelivery } from '../deliveries/index.js';
import { findHandoffMinutes } from '../dispatch/index.js';
import { loadHistories } from './history.js';
import { MAX_RANGE, around } from './queries.js';
import { resolve, type History, type Shift } from './resolver.js';
import * as repo from './schedules.repository.js';
import { noticeText } from './notice-text.js';

/** A shift begun this long ago is still announced (a job run missed, an instance restarting). */
export const LATE_NOTICE = 10 * MINUTE;

/** A person's time on call, contiguous pieces (of any layer or override) joined: "going on call" is its start. */
function periods(shifts: readonly Shift[]): Shift[] {
  const out: Shift[] = [];
  for (const s of shifts) {
    const last = out[out.length - 1];
    if (last && last.userId === s.userId && last.end === s.start) last.end = s.end;
    else out.push({ userId: s.userId, start: s.start, end: s.end, source: s.source });
  }
  return out;
}

/** The periods starting within [from, to]: resolved from a minute earlier, so one already under way at `from` is not taken for a start. */
function startingIn(h: History, from: number, to: number): Shift[] {
  return periods(resolve(h, from - MINUTE, to + MINUTE).shifts).filter((p) => p.start >= from && p.start <= to);
}

/** The end of the period that starts with `p`: its person's contiguous shifts followed for up to 93 days. */
function endOf(h: History, p: Shift): number {
  let end = p.start;
  while (end - p.start < MAX_RANGE) {
    const { current } = around(h, end);
    if (!current || current.userId !== p.userId || current.end <= end) break;
    end = current.end;
  }
  return end;
}

/** Sends the notices due now; returns how many people were told. */
export async function sendHandoffNotices(ctx: AppContext): Promise<number> {
  const now = ctx.clock.nowMs();
  const schedules = await repo.listLiveSchedules(ctx.db);
  if (schedules.length === 0) return 0;
  const minutes = await findHandoffMinutes(ctx.db, [...new Set(schedules.map((s) => s.org_id))]);
  const due = schedules.filter((s) => typeof minutes.get(s.org_id) === 'number');
  const histories = await loadHistories(ctx.db, due, now - LATE_NOTICE - MINUTE, now + MAX_RANGE);
  let told = 0;
  for (const s of due) {
    const h = histories.get(s.id)!;
    const ahead = minutes.get(s.org_id)! * MINUTE;
    for (const p of startingIn(h, now - LATE_NOTICE, now + ahead)) {
      if (await notify(ctx, s, { ...p, end: endOf(h, p) }, now)) told++;
    }
  }
  return told;
}

async function notify(ctx: AppContext, s: repo.ScheduleRow, p: Shift, now: number): Promise<boolean> {
  const user = await repo.noticeRecipient(ctx.db, p.userId);
  if (!user) return false;
  const text = noticeText({ schedule: s.name, zone: user.timezone, start: p.start, end: p.end, now });
  const url = `${ctx.config.publicUrl}/app/oncall`;
  return ctx.transaction(async (tx) => {
    if (!(await repo.claimNotice(tx.db, { schedule_id: s.id, user_id: p.userId, shift_start: iso(new Date(p.start)), created_at: iso(new Date(now)) }))) return false;
    const base = { topic: 'oncall.handoff', mode: 'live' as const, userId: user.id, orgId: s.org_id };
    await queueDelivery(ctx, tx, { ...base, kind: 'push', recipient: `user:${user.id}`, payload: { title: `On call: ${s.name}`, body: text, url, schedule_id: s.id } });
    await queueEmail(ctx, tx, { ...base, to: user.email, subject: text, text: `${text}.\n\nThe schedule: ${url}\n` });
    return true;
  });
}

/** A person's time on call that starts within a window (shiftsStarting). */
export interface ShiftStart {
  scheduleId: number;
  scheduleName: string;
  orgId: number;
  userId: number;
  /** ms */
  start: number;
  /** ms: the end of that person's contiguous time on call (followed for up to 93 days). */
  end: number;
}

/**
 * The periods on call (contiguous shifts of one person, of any layer or override, joined) of the
 * orgs' schedules that start within [from, to] (ms), as the handoff notices find them: for the
 * incident subscriptions' `oncall.shift_started` (modules/subscriptions, on the job scheduler).
 */
export async function shiftsStarting(ctx: AppContext, orgIds: readonly number[], from: number, to: number): Promise<ShiftStart[]> {
  const schedules = await repo.listSchedules(ctx.db, orgIds);
  if (schedules.length === 0) return [];
  const histories = await loadHistories(ctx.db, schedules, from - MINUTE, to + MAX_RANGE);
  return schedules.flatMap((s) => {
    const h = histories.get(s.id)!;
    return startingIn(h, from, to).map((p) => ({ scheduleId: s.id, scheduleName: s.name, orgId: s.org_id, userId: p.userId, start: p.start, end: endOf(h, p) }));
  });
}
