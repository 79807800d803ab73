import type { AppContext } from '../../../context.js';
import { postGuarded } from '../http-post.js';
import type { OutboxRow } from '../outbox.repository.js';
import { DeliveryError, type Sender } from './types.js';

/**
 * Phone alerts (SMS): through Twilio's REST API when TWILIO_* is set, else a generic HTTP hook
 * (MUSTER_PHONE_WEBHOOK_URL), else recorded as skipped. The daily cap is decided when queued (queuePhoneAlert).
 * A payload with `call: {url, statusCallback}` is a voice call (paging): Twilio's Calls API places
 * it, fetches its TwiML from `url` when answered and posts how it ended to `statusCallback`.
 */
export function phoneSender(ctx: AppContext): Sender {
  const { twilio, phoneWebhookUrl } = ctx.config;
  return async (row: OutboxRow) => {
    if (!twilio && !phoneWebhookUrl) return { outcome: 'skipped', note: 'no phone provider configured' };
    const p = row.payload as { title?: string; body?: string; call?: { url: string; statusCallback: string } };
    if (p.call && !twilio) return { outcome: 'skipped', note: 'voice calls need Twilio (TWILIO_*)' };
    const text = [p.title, p.body].filter(Boolean).join(': ').slice(0, 1500);
    const form: Record<string, string> = p.call
      ? { To: row.recipient, From: twilio!.from, Url: p.call.url, Method: 'POST', StatusCallback: p.call.statusCallback, StatusCallbackMethod: 'POST' }
      : { To: row.recipient, From: twilio?.from ?? '', Body: text };
    // Provider endpoints are configured by the operator, not by users: no address guard.
    const res = twilio
      ? await postGuarded(
          `${twilio.apiUrl}/2010-04-01/Accounts/${encodeURIComponent(twilio.accountSid)}/${p.call ? 'Calls' : 'Messages'}.json`,
          new URLSearchParams(form).toString(),
          {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')}`,
          },
          { timeoutMs: ctx.config.webhookTimeoutMs, allowPrivate: true },
        )
      : await postGuarded(phoneWebhookUrl!, JSON.stringify({ to: row.recipient, text, topic: row.topic, delivery_id: row.id }), { 'content-type': 'application/json' }, {
          timeoutMs: ctx.config.webhookTimeoutMs,
          allowPrivate: true,
        });
    if (res.status >= 200 && res.status < 300) return { outcome: 'sent', statusCode: res.status };
    throw new DeliveryError(`HTTP ${res.status}: ${res.body.slice(0, 200)}`, res.status, res.status >= 400 && res.status < 500 && res.status !== 429);
  };
}
