import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, restartedContext, testDialect, type TestApp } from '../../../test/helpers.js';
import { vapidKeys } from './senders/push.js';

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
});
