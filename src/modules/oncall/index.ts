// The public surface of on-call schedules: other modules (paging, reports, the user's calendar
// feed, the job scheduler) import only this file. Every answer comes from the whole history, so a
// question about an earlier instant is answered as things were then (layers, overrides, members).
import type { AppContext } from '../../context.js';
import { loadHistories } from './history.js';
import { mergeIntervals, type Interval } from './intervals.js';
import { aroundMany } from './queries.js';
import { resolve, type Shift } from './resolver.js';
import * as repo from './schedules.repository.js';

export type { Shift, Source } from './resolver.js';
export { oncallRoutes } from './oncall.routes.js';
export { userShiftEvents, FEED_BACK, FEED_AHEAD } from './feeds.js';
export { sendHandoffNotices, shiftsStarting, type ShiftStart } from './handoffs.js';
export { syncShiftCalendars } from './calendar-writes.js';
export { AroundMemo } from './around-memo.js';

/** A schedule of an org by id, deleted ones included (their history stays answerable). */
async function scheduleOf(ctx: AppContext, orgId: number, scheduleId: number) {
  const s = await repo.findScheduleById(ctx.db, scheduleId);
  return s && s.org_id === orgId ? s : undefined;
}

/**
 * Who was (or is, or will be) on call in schedule `scheduleId` of org `orgId` at instant `at` (ms),
 * with the bounds of their shift; undefined in a gap or for an unknown schedule.
 */
export async function whoIsOnCall(ctx: AppContext, orgId: number, scheduleId: number, at: number): Promise<Shift | undefined> {
  const s = await scheduleOf(ctx, orgId, scheduleId);
  if (!s) return undefined;
  return (await aroundMany(ctx, [s], at)).get(s.id)!.current;
}

/** The ids of the org's schedules that are not deleted (what an escalation level may target). */
export async function liveScheduleIds(ctx: AppContext, orgId: number): Promise<Set<number>> {
  return new Set((await repo.listSchedules(ctx.db, [orgId])).map((s) => s.id));
}

/** The final shifts of a schedule over [from, to) (ms), in time order, and the gaps. */
export async function finalShifts(ctx: AppContext, orgId: number, scheduleId: number, from: number, to: number): Promise<{ shifts: Shift[]; gaps: { start: number; end: number }[] }> {
  const s = await scheduleOf(ctx, orgId, scheduleId);
  if (!s) return { shifts: [], gaps: [] };
  return resolve((await loadHistories(ctx.db, [s], from, to)).get(s.id)!, from, to);
}

/**
 * Hours on call per user over [from, to) across every schedule of the org, deleted ones included, for
 * reports. A person on call in two schedules at once is on call once: their shifts of every schedule
 * are joined before they are counted.
 */
export async function hoursOnCall(ctx: AppContext, orgId: number, from: number, to: number): Promise<Map<number, number>> {
  const schedules = await repo.allSchedulesOf(ctx.db, orgId);
  const histories = await loadHistories(ctx.db, schedules, from, to);
  const shifts = new Map<number, Interval[]>();
  for (const s of schedules) {
    for (const shift of resolve(histories.get(s.id)!, from, to).shifts) {
      const theirs = shifts.get(shift.userId) ?? [];
      theirs.push(shift);
      shifts.set(shift.userId, theirs);
    }
  }
  const hours = new Map<number, number>();
  for (const [userId, list] of shifts) hours.set(userId, mergeIntervals(list).reduce((sum, iv) => sum + (iv.end - iv.start) / 3_600_000, 0));
  return hours;
}
export type { OncallTables, OncallSchedulesTable, OncallLayerVersionsTable, OncallOverridesTable, OncallHandoffNoticesTable } from './oncall.tables.js';
