import { checkPushSubscription, type PushSubscriptionInput } from './push-keys.js';
import { userRowChanged } from '../users/user-cache.js';
import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { flag } from '../../db/schema.js';
import { ownedBy } from '../../db/scope.js';
import { iso } from '../../lib/clock.js';
import { notFound } from '../../lib/errors.js';
import { fetchWindow, pageOf } from '../../lib/paging.js';
import type { PagingQuery } from '../../lib/schemas.js';
import { signToken, verifyToken } from '../../lib/signing.js';
import { findUserById } from '../users/users.repository.js';
import { FEED_AHEAD, FEED_BACK, userShiftEvents } from '../oncall/index.js';
import { feedIcs, type FeedEvent } from './ics.js';
import { attemptsOf, listForUser, requeueFailed } from './outbox.repository.js';

/** The caller's deliveries in their mode, newest first, each with its attempts. */
export async function listDeliveries(ctx: AppContext, actor: Actor, q: PagingQuery) {
  const w = fetchWindow(q);
  const rows = await listForUser(ctx.db, actor.userId, actor.mode, w.limit, w.offset);
  const attempts = await attemptsOf(ctx.db, rows.slice(0, q.limit).map((r) => r.id));
  const { items, ...page } = pageOf(rows, q, (r) => ({
    id: r.id,
    kind: r.kind,
    topic: r.topic,
    recipient: r.recipient,
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: r.status === 'pending' ? r.next_attempt_at : null,
    last_error: r.last_error,
    created_at: r.created_at,
    updated_at: r.updated_at,
    attempt_log: attempts
      .filter((a) => a.outbox_id === r.id)
      .map((a) => ({ attempt: a.attempt, outcome: a.outcome, status_code: a.status_code, error: a.error, duration_ms: a.duration_ms, at: a.created_at })),
  }));
  return { deliveries: items, ...page };
}

/** Sends a failed delivery again now (its owner, its mode). */
export async function retryDelivery(ctx: AppContext, actor: Actor, id: number) {
  if (!(await requeueFailed(ctx.db, id, actor.userId, actor.mode, iso(ctx.clock.now())))) throw notFound();
  ctx.outbox.wake();
  return { id, status: 'pending' as const };
}

export async function subscribePush(ctx: AppContext, actor: Actor, s: PushSubscriptionInput) {
  checkPushSubscription(ctx, s);
  const now = iso(ctx.clock.now());
  // One endpoint is one browser: registering it again (possibly as another user) moves it, within
  // the credential's mode. A test key's subscription is a row of its own: it never receives live
  // alerts, and never takes over or removes a live one.
  await ctx.db
    .insertInto('push_subscriptions')
    .values({ user_id: actor.userId, livemode: flag(actor.mode === 'live'), endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth, created_at: now })
    .onConflict((oc) => oc.columns(['endpoint', 'livemode']).doUpdateSet({ user_id: actor.userId, p256dh: s.keys.p256dh, auth: s.keys.auth, created_at: now }))
    .execute();
  return { ok: true };
}

export async function unsubscribePush(ctx: AppContext, actor: Actor, endpoint: string) {
  await ctx.db.deleteFrom('push_subscriptions').where('endpoint', '=', endpoint).$call(ownedBy(actor, 'push_subscriptions')).execute();
  return { ok: true };
}

/** The private feed link: signed with the instance secret over the user and their feed version. */
async function feedUrl(ctx: AppContext, userId: number): Promise<string> {
  const user = await findUserById(ctx.db, userId);
  if (!user) throw notFound();
  return `${ctx.config.publicUrl}/calendar/${signToken(ctx.secret, 'calendar', `${user.id}-${user.calendar_feed_version}`)}.ics`;
}

/** The feed carries live bookings (attendees' names and emails): a live record, so a test key gets 404 (docs/api.md). */
function liveOnly(actor: Actor): void {
  if (actor.mode !== 'live') throw notFound();
}

export const calendarFeedUrl = async (ctx: AppContext, actor: Actor) => {
  liveOnly(actor);
  return { url: await feedUrl(ctx, actor.userId) };
};

/** A new link; the old one stops working at once. */
export async function rotateCalendarFeed(ctx: AppContext, actor: Actor) {
  liveOnly(actor);
  await ctx.db.updateTable('users').set((eb) => ({ calendar_feed_version: eb('calendar_feed_version', '+', 1) })).where('id', '=', actor.userId).execute();
  userRowChanged(ctx, actor.userId);
  return { url: await feedUrl(ctx, actor.userId) };
}

/**
 * The ICS feed behind a link: the user's upcoming live bookings as host (from 30 days back), and
 * their on-call shifts of the last 30 days and the next 90 ("On call: <schedule>").
 */
export async function calendarFeed(ctx: AppContext, token: string): Promise<string> {
  const subject = verifyToken(ctx.secret, 'calendar', token);
  const [userId, version] = (subject ?? '').split('-').map(Number);
  const user = userId ? await findUserById(ctx.db, userId) : undefined;
  if (!user || user.calendar_feed_version !== version) throw notFound();
  const from = iso(new Date(ctx.clock.now().getTime() - 30 * 24 * 3600 * 1000));
  const rows = await ctx.db
    .selectFrom('bookings')
    .leftJoin('event_types', 'event_types.id', 'bookings.event_type_id')
    .select(['bookings.id', 'bookings.start_time', 'bookings.end_time', 'bookings.status', 'bookings.attendee_name', 'bookings.attendee_email', 'bookings.notes', 'bookings.updated_at', 'event_types.name'])
    .where('bookings.host_id', '=', user.id)
    .where('bookings.livemode', '=', 1)
    .where('bookings.status', 'in', ['confirmed', 'pending'])
    .where('bookings.end_time', '>=', from)
    .orderBy('bookings.start_time')
    .limit(2000)
    .execute();
  const now = ctx.clock.nowMs();
  const shifts = await userShiftEvents(ctx, user.id, now - FEED_BACK, now + FEED_AHEAD);
  return feedIcs(`${user.name} · Muster`, [
    ...rows.map((b): FeedEvent => ({
      uid: `${b.id}@muster`,
      start: b.start_time,
      end: b.end_time,
      summary: `${b.name ?? 'Booking'} with ${b.attendee_name}`,
      description: [b.attendee_email, b.notes].filter(Boolean).join('\n'),
      status: b.status === 'pending' ? 'pending' : 'confirmed',
      // The booking's last change, not the fetch: the same feed twice is the same text.
      stamp: b.updated_at,
    })),
    ...shifts,
  ]);
}
