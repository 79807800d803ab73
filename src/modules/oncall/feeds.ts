// Calendar feeds of shifts: each schedule's private feed of its final shifts, and the events the
// user's own private feed (GET /v1/calendar, modules/deliveries) carries for their shifts.
import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { DAY, iso } from '../../lib/clock.js';
import { notFound } from '../../lib/errors.js';
import { signToken, verifyToken } from '../../lib/signing.js';
import { feedIcs, type FeedEvent } from '../deliveries/index.js';
import { membershipsOf } from '../orgs/index.js';
import { loadHistories } from './history.js';
import { shiftsOfUser } from './oncall.service.js';
import { resolve, type Shift } from './resolver.js';
import * as repo from './schedules.repository.js';
import { scheduleAccess } from './schedules.service.js';
import { DELETED_USER } from './views.js';

/** What a feed holds: the last 30 days and the next 90. */
export const FEED_BACK = 30 * DAY;
export const FEED_AHEAD = 90 * DAY;
const PURPOSE = 'schedule-calendar';

const feedUrl = (ctx: AppContext, s: repo.ScheduleRow) => `${ctx.config.publicUrl}/calendar/schedules/${signToken(ctx.secret, PURPOSE, `${s.id}-${s.feed_version}`)}.ics`;

/** A stable UID per shift (schedule, person, start), so calendars update it rather than add another. */
export const shiftUid = (scheduleId: number, s: Shift) => `shift-${scheduleId}-${s.userId}-${s.start}@muster`;

export async function scheduleFeedUrl(ctx: AppContext, actor: Actor, orgSlug: string, ref: string) {
  const { schedule } = await scheduleAccess(ctx, actor, orgSlug, ref);
  return { url: feedUrl(ctx, schedule) };
}

/** A new link (admins and owners); the old one stops working at once. */
export async function rotateScheduleFeed(ctx: AppContext, actor: Actor, orgSlug: string, ref: string) {
  const { schedule } = await scheduleAccess(ctx, actor, orgSlug, ref, { role: 'admin', write: true });
  await repo.bumpFeedVersion(ctx.db, schedule.id);
  return { url: feedUrl(ctx, (await repo.findScheduleById(ctx.db, schedule.id))!) };
}

/** The ICS behind a schedule's link: one event per final shift. A deleted schedule's link is 404. */
export async function scheduleFeedIcs(ctx: AppContext, token: string): Promise<string> {
  const [id, version] = (verifyToken(ctx.secret, PURPOSE, token) ?? '').split('-').map(Number);
  const s = id ? await repo.findScheduleById(ctx.db, id) : undefined;
  if (!s || s.deleted_at !== null || s.feed_version !== version) throw notFound();
  const now = ctx.clock.nowMs();
  const [from, to] = [now - FEED_BACK, now + FEED_AHEAD];
  const h = (await loadHistories(ctx.db, [s], from, to)).get(s.id)!;
  const { shifts } = resolve(h, from, to);
  const names = await repo.userNames(ctx.db, shifts.map((x) => x.userId));
  return feedIcs(
    `On call: ${s.name} · Muster`,
    shifts.map((x) => ({
      uid: shiftUid(s.id, x),
      start: iso(new Date(x.start)),
      end: iso(new Date(x.end)),
      summary: `On call: ${names.get(x.userId) ?? DELETED_USER}`,
      description: `${s.name} (${s.time_zone})`,
      status: 'confirmed' as const,
      transparent: true,
      stamp: s.updated_at,
    })),
  );
}

/** The user's shifts in every schedule of their orgs over [from, to), as events of their own feed. */
export async function userShiftEvents(ctx: AppContext, userId: number, from: number, to: number): Promise<FeedEvent[]> {
  const { orgIds } = await membershipsOf(ctx, userId);
  const found = await shiftsOfUser(ctx, userId, orgIds, from, to);
  return found.map(({ shift, schedule: s }) => ({
    uid: shiftUid(s.id, shift),
    start: iso(new Date(shift.start)),
    end: iso(new Date(shift.end)),
    summary: `On call: ${s.name}`,
    description: `${s.name} (${s.time_zone})`,
    status: 'confirmed' as const,
      transparent: true,
    stamp: s.updated_at,
  }));
}
