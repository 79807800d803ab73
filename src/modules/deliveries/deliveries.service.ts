import { checkPushSubscription, type PushSubscriptionInput } from './push-keys.js';
import { userRowChanged } from '../users/index.js';
import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { flag } from '../../db/schema.js';
import { ownedBy } from '../../db/scope.js';
import { iso } from '../../lib/clock.js';
import { notFound } from '../../lib/errors.js';
import { fetchWindow, pageOf } from '../../lib/paging.js';
import type { PagingQuery } from '../../lib/schemas.js';
import { signToken } from '../../lib/signing.js';
import { findUserById } from '../users/index.js';
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
