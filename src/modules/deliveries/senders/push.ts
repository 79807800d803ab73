import type webpushModule from 'web-push';
import type https from 'node:https';
import type { AppContext } from '../../../context.js';
import { ownedBy } from '../../../db/scope.js';
import { getOrCreateJsonSetting } from '../../../db/settings.js';
import { postGuarded } from '../http-post.js';
import { reachReason } from '../reach.js';
import type { OutboxRow } from '../outbox.repository.js';
import { BlockedAddressError } from '../ssrf.js';
import { DeliveryError, type Sender } from './types.js';
import { HOUR } from '../../../lib/clock.js';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** web-push, loaded with the first push or key asked for, not at every start (docs/architecture.md, "Testing"). */
let loaded: Promise<typeof webpushModule> | undefined;
const loadWebPush = () => (loaded ??= import('web-push').then((m) => m.default));

/** Per context, the keys once read: stored once and never replaced, so every instance holds the same pair. */
const heldKeys = new WeakMap<AppContext, Promise<VapidKeys>>();

/**
 * The instance's VAPID keys, made at first use and kept in the database (shared by every instance),
 * then held in memory: the stored pair is never replaced (a first use that loses the race reads the
 * winner's), so a push neither makes a key pair nor reads the database for it.
 */
export function vapidKeys(ctx: AppContext): Promise<VapidKeys> {
  let keys = heldKeys.get(ctx);
  if (!keys) {
    keys = loadWebPush().then((webpush) => {
      const made = webpush.generateVAPIDKeys();
      return getOrCreateJsonSetting<VapidKeys>(ctx.db, 'vapid_keys', () => made);
    });
    heldKeys.set(ctx, keys);
    keys.catch(() => heldKeys.delete(ctx)); // a failed read is tried again by the next push
  }
  return keys;
}

/** A VAPID token is signed to expire this long after its signing (web-push's default; RFC 8292 §2 allows at most 24 h)... */
const TOKEN_LIFE_S = 12 * 60 * 60;
/** ...and is sent for this long after its signing, then signed anew: every token sent has at least 11 h of life left. */
const TOKEN_REUSE_MS = HOUR;
/** Push services (token audiences) held at most per context: browsers use a handful (FCM, Mozilla, Apple, Microsoft). */
const MAX_AUDIENCES = 100;
/** Per context, per push service origin: the `Authorization` value last signed, and when. */
type HeldToken = { authorization: string; signedAt: number };
const heldTokens = new WeakMap<AppContext, Map<string, HeldToken>>();

/**
 * The `Authorization: vapid t=<JWT>, k=<public key>` of a push to `endpoint` (RFC 8292): a JWT with the push service's
 * origin as `aud`, signed (ES256) once per push service and hour and sent with every push to it meanwhile, as a bearer
 * token is, instead of signed per push (an ECDSA signature and a key import each: about a fifth of the CPU of paging one
 * person on SQLite, `npx tsx bench/profile-paging.ts`). The keys of a context are never replaced (vapidKeys), so a held
 * token stays valid until its `exp`. The times are the real clock's (`now`), not the app's: the push service checks `exp`
 * against its own.
 */
export function vapidAuthorization(ctx: AppContext, webpush: typeof webpushModule, keys: VapidKeys, endpoint: string, now = Date.now()): string {
  const audience = new URL(endpoint).origin;
  let held = heldTokens.get(ctx);
  if (!held) heldTokens.set(ctx, (held = new Map<string, HeldToken>()));
  const hit = held.get(audience);
  if (hit && now >= hit.signedAt && now - hit.signedAt < TOKEN_REUSE_MS) return hit.authorization;
  const { Authorization } = webpush.getVapidHeaders(audience, ctx.config.vapidSubject, keys.publicKey, keys.privateKey, 'aes128gcm', Math.floor(now / 1000) + TOKEN_LIFE_S);
  held.delete(audience);
  if (held.size >= MAX_AUDIENCES) held.delete(held.keys().next().value!);
  held.set(audience, { authorization: Authorization, signedAt: now });
  return Authorization;
}

/**
 * Web Push to every browser the user registered: encrypted (aes128gcm) and signed with the VAPID
 * keys, high urgency and a short TTL (an alert an hour late is noise). A 404 or 410 from the
 * push service means the subscription is gone: it is deleted. The request goes out like a
 * webhook's (`postGuarded`): the address checked at connect time on every attempt unless
 * MUSTER_ALLOW_PRIVATE_WEBHOOKS, no redirects, a hard deadline.
 */
export function pushSender(ctx: AppContext, agent?: https.Agent): Sender {
  return async (row: OutboxRow) => {
    const userId = Number(row.recipient.replace(/^user:/, ''));
    // The browsers registered in the delivery's mode only: a test key's subscription never gets a live alert.
    const owner = { userId, mode: row.livemode === 1 ? ('live' as const) : ('test' as const) };
    const subs = await ctx.db.selectFrom('push_subscriptions').selectAll().$call(ownedBy(owner, 'push_subscriptions')).execute();
    if (subs.length === 0) return { outcome: 'skipped', note: 'no push subscription' };
    const keys = await vapidKeys(ctx);
    const webpush = await loadWebPush();
    let delivered = 0;
    let lastError = '';
    let permanent = true;
    for (const s of subs) {
      let req: webpushModule.RequestDetails;
      try {
        // The payload encrypted for this browser (a key agreement of its own each time); no vapidDetails (web-push's global
        // ones are never set): the VAPID token is the one held for the push service.
        req = webpush.generateRequestDetails({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } }, JSON.stringify(row.payload), {
          TTL: 300,
          urgency: 'high',
          contentEncoding: 'aes128gcm',
        });
        req.headers.Authorization = vapidAuthorization(ctx, webpush, keys, s.endpoint);
      } catch {
        // Keys stored before they were checked at subscription: nothing to send them with.
        lastError = 'the subscription keys are invalid';
        continue;
      }
      let status: number;
      try {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        status = (await postGuarded(req.endpoint, req.body ?? '', headers, { timeoutMs: ctx.config.webhookTimeoutMs, allowPrivate: ctx.config.allowPrivateWebhooks, ...(agent ? { agent } : {}) })).status;
      } catch (err) {
        // Never the socket's own error (`connect ECONNREFUSED 10.0.0.5:8443`): a port-scan oracle (reach.ts).
        lastError = reachReason(ctx.log, err, 'the push service');
        if (!(err instanceof BlockedAddressError)) permanent = false;
        continue;
      }
      if (status >= 200 && status < 300) delivered += 1;
      else if (status === 404 || status === 410) await ctx.db.deleteFrom('push_subscriptions').where('id', '=', s.id).execute();
      else {
        lastError = `the push service answered HTTP ${status}`;
        permanent = false;
      }
    }
    if (delivered > 0) return { outcome: 'sent', note: `${delivered} of ${subs.length} browsers` };
    if (!lastError) return { outcome: 'skipped', note: 'every subscription had expired' };
    // Only refused addresses or unusable keys: trying again cannot help.
    throw new DeliveryError(lastError, null, permanent);
  };
}
