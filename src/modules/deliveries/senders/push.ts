import webpush from 'web-push';
import type https from 'node:https';
import type { AppContext } from '../../../context.js';
import { getOrCreateSetting } from '../../../db/settings.js';
import type { OutboxRow } from '../outbox.repository.js';
import { DeliveryError, type Sender } from './types.js';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** The instance's VAPID keys, made at first use and kept in the database (shared by every instance). */
export async function vapidKeys(ctx: AppContext): Promise<VapidKeys> {
  const made = JSON.stringify(webpush.generateVAPIDKeys());
  return JSON.parse(await getOrCreateSetting(ctx.db, 'vapid_keys', () => made)) as VapidKeys;
}

/**
 * Web Push to every browser the user registered: encrypted (aes128gcm) and signed with the VAPID
 * keys, high urgency and a short TTL (an alert an hour late is noise). A 404 or 410 from the
 * push service means the subscription is gone: it is deleted.
 */
export function pushSender(ctx: AppContext, agent?: https.Agent): Sender {
  return async (row: OutboxRow) => {
    const userId = Number(row.recipient.replace(/^user:/, ''));
    const subs = await ctx.db.selectFrom('push_subscriptions').selectAll().where('user_id', '=', userId).execute();
    if (subs.length === 0) return { outcome: 'skipped', note: 'no push subscription' };
    const keys = await vapidKeys(ctx);
    let delivered = 0;
    let lastError = '';
    for (const s of subs) {
      try {
        await webpush.sendNotification({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } }, row.payload, {
          vapidDetails: { subject: ctx.config.vapidSubject, publicKey: keys.publicKey, privateKey: keys.privateKey },
          TTL: 300,
          urgency: 'high',
          contentEncoding: 'aes128gcm',
          timeout: ctx.config.webhookTimeoutMs,
          ...(agent ? { agent } : {}),
        });
        delivered += 1;
      } catch (err) {
        const status = (err as { statusCode?: number }).statusCode;
        if (status === 404 || status === 410) await ctx.db.deleteFrom('push_subscriptions').where('id', '=', s.id).execute();
        else lastError = err instanceof Error ? err.message : String(err);
      }
    }
    if (delivered > 0) return { outcome: 'sent', note: `${delivered} of ${subs.length} browsers` };
    if (!lastError) return { outcome: 'skipped', note: 'every subscription had expired' };
    throw new DeliveryError(lastError);
  };
}
