import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import webpush from 'web-push';
import { HOUR } from '../../lib/clock.js';
import { buildTestApp, restartedContext, testDialect, type TestApp } from '../../../test/helpers.js';
import { verifyVapid } from '../../../test/peers.js';
import { vapidAuthorization, vapidKeys } from './senders/push.js';

// The VAPID keys sign every push: made once, stored, and then held in memory (senders/push.ts), so a
// page's push neither makes a key pair nor reads the database for it.
describe(`the VAPID keys on ${testDialect}`, () => {
  let t: TestApp;
  let reads = 0;
  before(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => void (/"settings"/.test(sql) && (reads += 1)) });
  });
  after(() => t.close());

  const publicKey = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/push/public-key' });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ public_key: string }>().public_key;
  };

  test('made at first use, then answered from memory', async () => {
    reads = 0;
    const first = await publicKey();
    assert.ok(reads > 0, 'made and stored at first use');
    reads = 0;
    assert.equal(await publicKey(), first);
    assert.equal((await vapidKeys(t.ctx)).publicKey, first);
    assert.equal(reads, 0, 'no statement for the keys after the first use');
  });

  test('two instances using them first at once agree on one pair, and a restart signs with it', async () => {
    const fresh = await buildTestApp();
    const other = await restartedContext(fresh);
    try {
      const [a, b] = await Promise.all([vapidKeys(fresh.ctx), vapidKeys(other)]);
      assert.deepEqual(b, a);
      const restarted = await restartedContext(fresh);
      assert.deepEqual(await vapidKeys(restarted).finally(() => restarted.close()), a);
    } finally {
      await other.close();
      await fresh.close();
    }
  });

  test('a VAPID token is signed once per push service and hour, and sent with every push to it meanwhile', async () => {
    const keys = await vapidKeys(t.ctx);
    const t0 = Date.now();
    const fcm = 'https://fcm.googleapis.com/fcm/send/abc';
    const first = vapidAuthorization(t.ctx, webpush, keys, fcm, t0);
    const claims = verifyVapid(first, keys.publicKey);
    assert.deepEqual(claims, { aud: 'https://fcm.googleapis.com', exp: Math.floor(t0 / 1000) + 12 * 3600, sub: t.ctx.config.vapidSubject });
    // Another browser on the same push service, later in the hour: the same token (an ECDSA signature is never made twice alike).
    assert.equal(vapidAuthorization(t.ctx, webpush, keys, 'https://fcm.googleapis.com/fcm/send/other', t0 + HOUR - 1), first);
    // Another push service: a token of its own, its origin the audience.
    const mozilla = vapidAuthorization(t.ctx, webpush, keys, 'https://updates.push.services.mozilla.com/wpush/v2/xyz', t0 + 1);
    assert.notEqual(mozilla, first);
    assert.equal(verifyVapid(mozilla, keys.publicKey).aud, 'https://updates.push.services.mozilla.com');
    // An hour after its signing the token is signed anew, expiring 12 h after that: every token sent has 11 h of life left.
    const renewed = vapidAuthorization(t.ctx, webpush, keys, fcm, t0 + HOUR);
    assert.notEqual(renewed, first);
    assert.equal(verifyVapid(renewed, keys.publicKey).exp, Math.floor((t0 + HOUR) / 1000) + 12 * 3600);
    // A clock stepped back (before the held token's signing) signs anew rather than trusting the held one.
    assert.notEqual(vapidAuthorization(t.ctx, webpush, keys, fcm, t0 - 1000), renewed);
  });

  test('at most 100 push services are held per context: the 101st lets the one signed longest ago go', async () => {
    const { default: webpush } = await import('web-push');
    const keys = await vapidKeys(t.ctx);
    const ctx = { config: t.ctx.config } as typeof t.ctx; // a context of its own: nothing held yet
    const t0 = Date.now();
    const origin = (i: number) => `https://push-${i}.example.net/send/${i}`;
    const first = Array.from({ length: 101 }, (_, i) => vapidAuthorization(ctx, webpush, keys, origin(i), t0));
    // Services 1 to 100 are held (the same token within the hour); service 0, the first signed, was let go at the 101st.
    for (const i of [1, 50, 100]) assert.equal(vapidAuthorization(ctx, webpush, keys, origin(i), t0 + 1), first[i], `service ${i} held`);
    assert.notEqual(vapidAuthorization(ctx, webpush, keys, origin(0), t0 + 1), first[0], 'service 0 signed anew');
    // Signing service 0 again let service 1 (now the longest ago) go.
    assert.notEqual(vapidAuthorization(ctx, webpush, keys, origin(1), t0 + 2), first[1], 'service 1 signed anew');
  });
});
