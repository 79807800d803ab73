import type { AppContext } from '../../context.js';
import { iso } from '../../lib/clock.js';
import { BlockedAddressError, DeliveryError, postGuarded, reachReason, signWebhook, type OutboxRow, type PostResult, type Sender } from '../deliveries/index.js';
import { disableSubscription, subscriptionById, type SubscriptionRow } from './subscriptions.repository.js';

/** The payload of a subscription's outbox row (hook.ts queues it; outbox.ts adds `webhook_id`). */
export interface SubscriptionPayload {
  subscription_id: number;
  body: unknown;
  webhook_id?: string;
}

/** Whether an outbox `webhook` row is a subscription's (else a booking's). */
export function isSubscriptionDelivery(row: OutboxRow): boolean {
  const p = row.payload as Partial<SubscriptionPayload> | null;
  return typeof p === 'object' && p !== null && typeof p.subscription_id === 'number';
}

/**
 * POSTs one body to a subscription's URL, through the outgoing guard (no redirects, a deadline,
 * the address checked when connecting). `standard` is signed per Standard Webhooks with the
 * subscription's secret (webhook-id, webhook-timestamp, webhook-signature); chat and teams bodies
 * go as they are (those receivers check nothing but their secret URL).
 */
export async function postTo(ctx: AppContext, sub: Pick<SubscriptionRow, 'url' | 'format' | 'secret'>, body: unknown, webhookId: string): Promise<PostResult> {
  const text = JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Muster-Webhooks/1' };
  if (sub.format === 'standard' && sub.secret) {
    const now = ctx.clock.now();
    Object.assign(headers, {
      'webhook-id': webhookId,
      'webhook-timestamp': Math.floor(now.getTime() / 1000).toString(),
      'webhook-signature': signWebhook(sub.secret, webhookId, now, text),
    });
  }
  return postGuarded(sub.url, text, headers, { timeoutMs: ctx.config.webhookTimeoutMs, allowPrivate: ctx.config.allowPrivateWebhooks });
}

/**
 * The outbox worker's sender of subscription deliveries (composed with the booking webhooks' in
 * jobs/outbox-senders.ts). 2xx is delivered; 410 turns the subscription off and stops; a refused
 * address stops; anything else (3xx included) is retried on the outbox schedule. A subscription
 * deleted, turned off, or moved to another URL since the delivery was queued gets nothing.
 */
export function subscriptionSender(ctx: AppContext): Sender {
  return async (row) => {
    const p = row.payload as SubscriptionPayload;
    const sub = await subscriptionById(ctx.db, p.subscription_id);
    if (!sub) return { outcome: 'skipped', note: 'the subscription was deleted' };
    if (sub.disabled_at !== null) return { outcome: 'skipped', note: 'the subscription is turned off' };
    if (sub.url !== row.recipient) return { outcome: 'skipped', note: "the subscription's URL changed" };
    let res: PostResult;
    try {
      res = await postTo(ctx, sub, p.body, p.webhook_id ?? `msg_outbox_${row.id}`);
    } catch (err) {
      throw new DeliveryError(reachReason(ctx.log, err, 'the webhook receiver'), null, err instanceof BlockedAddressError);
    }
    if (res.status >= 200 && res.status < 300) return { outcome: 'sent', statusCode: res.status };
    if (res.status === 410) {
      if (await disableSubscription(ctx.db, sub.id, row.recipient, '410 Gone from the receiver', iso(ctx.clock.now()))) ctx.events.endAccess({ subscriptionsOf: sub.org_id });
      throw new DeliveryError('410 Gone: the subscription was turned off', 410, true);
    }
    throw new DeliveryError(`HTTP ${res.status}`, res.status);
  };
}
