import { createHmac } from 'node:crypto';
import type * as StandardWebhooks from 'standardwebhooks';
import { lazyRequire } from '../../../lib/lazy-require.js';
import type { AppContext } from '../../../context.js';
import { iso } from '../../../lib/clock.js';
import { postGuarded } from '../http-post.js';
import type { OutboxRow } from '../outbox.repository.js';
import { reachReason } from '../reach.js';
import { BlockedAddressError } from '../ssrf.js';
import { DeliveryError, type Sender } from './types.js';

// standardwebhooks loads with the first webhook signed, not at every start.
const standardWebhooks = lazyRequire<typeof StandardWebhooks>('standardwebhooks');

/** A Standard Webhooks `webhook-signature` of `body` with `secret` (`whsec_...`). */
export function signWebhook(secret: string, id: string, at: Date, body: string): string {
  return new (standardWebhooks().Webhook)(secret).sign(id, at, body);
}

interface WebhookPayload {
  event_type_id: number;
  body: unknown;
  /** Set when queued (outbox.ts); older rows: see below. */
  webhook_id?: string;
}

/**
 * Sends `booking.*` webhooks signed per Standard Webhooks with the event type's secret. The
 * `webhook-id` is fixed when the delivery is queued (globally unique, issue 32), identical on every
 * retry, so receivers can drop duplicates.
 * 2xx is delivered; 410 disables the URL on the event type; a refused address is permanent;
 * anything else (3xx included: redirects are not followed) is retried.
 */
export function webhookSender(ctx: AppContext): Sender {
  return async (row: OutboxRow) => {
    const p = row.payload as WebhookPayload;
    const et = await ctx.db.selectFrom('event_types').select(['webhook_secret']).where('id', '=', p.event_type_id).executeTakeFirst();
    if (!et?.webhook_secret) return { outcome: 'skipped', note: 'the event type or its webhook secret is gone' };
    // Rows queued before ids were fixed at queueing: the row id, made unique to this installation by the instance secret.
    const id = p.webhook_id ?? `msg_${row.id}_${createHmac('sha256', ctx.secret).update(`webhook-id:${row.id}`).digest('hex').slice(0, 20)}`;
    const now = ctx.clock.now();
    const body = JSON.stringify(p.body);
    const signature = signWebhook(et.webhook_secret, id, now, body);
    let res;
    try {
      res = await postGuarded(
        row.recipient,
        body,
        {
          'content-type': 'application/json',
          'user-agent': 'Muster-Webhooks/1',
          'webhook-id': id,
          'webhook-timestamp': Math.floor(now.getTime() / 1000).toString(),
          'webhook-signature': signature,
        },
        { timeoutMs: ctx.config.webhookTimeoutMs, allowPrivate: ctx.config.allowPrivateWebhooks },
      );
    } catch (err) {
      // Never the resolved address or the socket's own error in the log its owner reads (reach.ts).
      throw new DeliveryError(reachReason(ctx.log, err, 'the webhook receiver'), null, err instanceof BlockedAddressError);
    }
    if (res.status >= 200 && res.status < 300) return { outcome: 'sent', statusCode: res.status };
    if (res.status === 410) {
      await ctx.db.updateTable('event_types').set({ webhook_url: null, updated_at: iso(ctx.clock.now()) }).where('id', '=', p.event_type_id).where('webhook_url', '=', row.recipient).execute();
      throw new DeliveryError('410 Gone: the webhook URL was disabled', 410, true);
    }
    throw new DeliveryError(`HTTP ${res.status}`, res.status);
  };
}
