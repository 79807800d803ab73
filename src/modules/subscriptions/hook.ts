import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, Flag } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import type { Tx } from '../../db/transaction.js';
import { queueDeliveries, type Delivery } from '../deliveries/index.js';
import { incidentById, toIncident, type TimelineEvent, type TimelineIncident } from '../incidents/index.js';
import { findUserById } from '../users/index.js';
import { SubscriptionCache } from './cache.js';
import { eventOfTimeline, type SubscriptionEvent } from './events.js';
import { render, type Format, type Message } from './formats.js';
import type { SubscriptionPayload } from './sender.js';
import type { SubscriptionRow } from './subscriptions.repository.js';
import type { SiteTransition } from '../sites/index.js';

/** Whether a subscription is on and wants `type` (its events are a JSON array of names). */
export const wants = (s: SubscriptionRow, type: SubscriptionEvent) => s.disabled_at === null && s.events.includes(type);

/** The org's subscriptions of one mode that want `type`: from the cache, so usually no query. */
export async function subscribersOf(ctx: AppContext, db: Kysely<DB>, orgId: number, livemode: Flag, type: SubscriptionEvent): Promise<SubscriptionRow[]> {
  return (await ctx.subscriptions.cache.ofOrg(db, orgId)).filter((s) => s.livemode === livemode && wants(s, type));
}

/** One outbox row per subscription, each with the body in the subscription's format. */
export async function queueMessage(ctx: AppContext, tx: Tx, subs: readonly SubscriptionRow[], message: Message): Promise<void> {
  const bodies = new Map<string, unknown>();
  const deliveries: Delivery[] = subs.map((s) => {
    if (!bodies.has(s.format)) bodies.set(s.format, render(s.format as Format, message));
    const payload: SubscriptionPayload = { subscription_id: s.id, body: bodies.get(s.format) };
    return { kind: 'webhook', topic: message.type, recipient: s.url, mode: s.livemode === 1 ? 'live' : 'test', orgId: s.org_id, userId: s.created_by, payload };
  });
  await queueDeliveries(ctx, tx, deliveries);
}

/** Links in a message: the incident in the dashboard, and the field page where a responder acknowledges it (signed in). */
export const incidentLinks = (ctx: AppContext, id: number) => ({ incident: `${ctx.config.publicUrl}/app/incidents/${id}`, acknowledge: `${ctx.config.publicUrl}/field#incident-${id}` });

/**
 * Called by modules/incidents for every timeline event it records, inside the change's transaction
 * (so a delivery exists exactly when its change does: the outbox). Most events are none of the
 * subscription events and return at once; for the others the org's subscriptions come from the
 * cache, and only when one wants the event is the incident read (in the transaction, as the change
 * left it) and the bodies made.
 */
export async function onTimeline(ctx: AppContext, tx: Tx, incident: TimelineIncident, event: TimelineEvent): Promise<void> {
  const type = eventOfTimeline(event);
  if (type === undefined) return;
  const subs = await subscribersOf(ctx, tx.db, incident.org_id, incident.livemode, type);
  if (subs.length === 0) return;
  const row = await incidentById(tx.db, incident.id);
  if (!row) return;
  const assignee = row.assignee_id === null ? undefined : await findUserById(tx.db, row.assignee_id);
  await queueMessage(ctx, tx, subs, {
    type,
    at: event.at,
    incident: toIncident(ctx, row),
    assigneeName: assignee?.name ?? null,
    event,
    links: incidentLinks(ctx, row.id),
  });
}

/**
 * `site.enter` and `site.exit`, handed over by modules/sites (through `ctx.subscriptions.onSite`) in
 * the transaction that claimed the transition, so a delivery exists exactly when the transition was
 * recorded, once across instances. To the org's subscriptions of the transition's mode that want it;
 * from the cache, so an org without any costs no query.
 */
export async function onSite(ctx: AppContext, tx: Tx, t: SiteTransition): Promise<void> {
  const subs = await subscribersOf(ctx, tx.db, t.orgId, t.livemode, t.type);
  if (subs.length === 0) return;
  const user = await findUserById(tx.db, t.userId);
  await queueMessage(ctx, tx, subs, {
    type: t.type,
    at: t.at,
    site: t.site,
    user: { id: t.userId, name: user?.name ?? `user ${t.userId}` },
    device_id: t.deviceId,
    position: { lat: t.lat, lng: t.lng, accuracy: t.accuracy },
    links: { map: `${ctx.config.publicUrl}/app/sites` },
  });
}

/**
 * What modules below subscriptions (incidents, sites) need of it, built once per instance by context.ts
 * and handed down as `ctx.subscriptions` (docs/architecture.md, "Dependency rules").
 */
export function subscriptionsPort(bus: EventBus) {
  return { cache: new SubscriptionCache(bus), onTimeline, onSite };
}
export type SubscriptionsPort = ReturnType<typeof subscriptionsPort>;
