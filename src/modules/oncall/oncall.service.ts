import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { membershipsOf, orgAccess } from '../orgs/index.js';
import { loadHistories } from './history.js';
import { aroundMany, rangeOf, type Around } from './queries.js';
import { layerRows, resolve, type Shift } from './resolver.js';
import * as repo from './schedules.repository.js';
import { scheduleAccess } from './schedules.service.js';
import { shiftOut, spanOut } from './views.js';

const namesIn = (db: AppContext['db'], shifts: Iterable<Shift | undefined>) => repo.userNames(db, [...shifts].filter((s): s is Shift => s !== undefined).map((s) => s.userId));

/** Who is on call in one schedule at `at` (default now). */
export async function onCallAt(ctx: AppContext, actor: Actor, orgSlug: string, ref: string, atText: string | undefined) {
  const { schedule } = await scheduleAccess(ctx, actor, orgSlug, ref);
  const at = atText === undefined ? ctx.clock.nowMs() : Date.parse(atText);
  const { current } = (await aroundMany(ctx, [schedule], at)).get(schedule.id)!;
  const names = await namesIn(ctx.db, [current]);
  return { at: iso(new Date(at)), on_call: current ? [shiftOut(current, names)] : [] };
}

/** Every schedule of the org with who is on call now and next. */
export async function orgOnCall(ctx: AppContext, actor: Actor, orgSlug: string) {
  const access = await orgAccess(ctx, actor, { slug: orgSlug });
  const schedules = await repo.listSchedules(ctx.db, [access.org.id]);
  const found = await aroundMany(ctx, schedules, ctx.clock.nowMs());
  const names = await namesIn(ctx.db, [...found.values()].flatMap((a: Around) => [a.current, a.next]));
  return {
    schedules: schedules.map((s) => {
      const a = found.get(s.id)!;
      return { id: s.id, slug: s.slug, name: s.name, time_zone: s.time_zone, on_call: a.current ? [shiftOut(a.current, names)] : [], next: a.next ? [shiftOut(a.next, names)] : [] };
    }),
  };
}

/** The final schedule over a range (at most 93 days) and its gaps. */
export async function scheduleShifts(ctx: AppContext, actor: Actor, orgSlug: string, ref: string, q: { from?: string | undefined; to?: string | undefined }) {
  const { schedule } = await scheduleAccess(ctx, actor, orgSlug, ref);
  const { from, to } = rangeOf(q, ctx.clock.nowMs());
  const h = (await loadHistories(ctx.db, [schedule], from, to)).get(schedule.id)!;
  const r = resolve(h, from, to);
  const names = await namesIn(ctx.db, r.shifts);
  return { shifts: r.shifts.map((s) => shiftOut(s, names)), gaps: r.gaps.map(spanOut) };
}

/** Each layer alone, the overrides and the final row: what the dashboard's timeline draws. */
export async function scheduleTimeline(ctx: AppContext, actor: Actor, orgSlug: string, ref: string, q: { from?: string | undefined; to?: string | undefined }) {
  const { schedule } = await scheduleAccess(ctx, actor, orgSlug, ref);
  const { from, to } = rangeOf(q, ctx.clock.nowMs());
  const h = (await loadHistories(ctx.db, [schedule], from, to)).get(schedule.id)!;
  const r = resolve(h, from, to);
  const rows = layerRows(h, from, to);
  const overrides = h.overrides.filter((o) => o.end > from && o.start < to && o.end > o.start);
  const names = await repo.userNames(ctx.db, [...r.shifts.map((s) => s.userId), ...[...rows.values()].flatMap((row) => row.shifts.map((s) => s.userId)), ...overrides.map((o) => o.userId)]);
  return {
    from: iso(new Date(from)),
    to: iso(new Date(to)),
    time_zone: schedule.time_zone,
    layers: [...rows].map(([id, row]) => ({ id, name: row.name, shifts: row.shifts.map((s) => shiftOut(s, names)) })),
    overrides: overrides.map((o) => ({ id: o.id, user_id: o.userId, user_name: names.get(o.userId) ?? 'Deleted user', ...spanOut(o) })),
    final: r.shifts.map((s) => shiftOut(s, names)),
    gaps: r.gaps.map(spanOut),
  };
}

/** The shifts of `userId` in every schedule of `orgIds` over [from, to), in time order. */
export async function shiftsOfUser(ctx: AppContext, userId: number, orgIds: readonly number[], from: number, to: number) {
  const schedules = await repo.listSchedules(ctx.db, orgIds);
  const histories = await loadHistories(ctx.db, schedules, from, to);
  const out: { shift: Shift; schedule: repo.ScheduleRow }[] = [];
  for (const s of schedules) {
    const h = histories.get(s.id)!;
    // Only schedules that name the user somewhere need resolving.
    const named = h.overrides.some((o) => o.userId === userId) || h.versions.some((v) => v.layers.some((l) => l.users.includes(userId)));
    if (!named) continue;
    for (const shift of resolve(h, from, to).shifts) if (shift.userId === userId) out.push({ shift, schedule: s });
  }
  return out.sort((a, b) => a.shift.start - b.shift.start);
}

/** GET /v1/auth/me/shifts: the caller's shifts across all their orgs. */
export async function myShifts(ctx: AppContext, actor: Actor, q: { from?: string | undefined; to?: string | undefined }) {
  const { from, to } = rangeOf(q, ctx.clock.nowMs());
  const { orgIds } = await membershipsOf(ctx, actor.userId);
  const found = await shiftsOfUser(ctx, actor.userId, orgIds, from, to);
  const orgs = await orgSlugs(ctx, [...new Set(found.map((f) => f.schedule.org_id))]);
  const names = await repo.userNames(ctx.db, [actor.userId]);
  return {
    shifts: found.map(({ shift, schedule: s }) => ({
      ...shiftOut(shift, names),
      schedule: { id: s.id, slug: s.slug, name: s.name, time_zone: s.time_zone, org_id: s.org_id, org_slug: orgs.get(s.org_id) ?? '' },
    })),
  };
}

async function orgSlugs(ctx: AppContext, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await ctx.db.selectFrom('orgs').select(['id', 'slug']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.slug]));
}
