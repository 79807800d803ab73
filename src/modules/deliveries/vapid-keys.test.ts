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
});
