import assert from 'node:assert/strict';
import { createECDH, randomBytes } from 'node:crypto';
import https from 'node:https';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, signUp } from '../../../test/factories.js';
import { browserKeys, listDeliveries, selfSignedCert, startReceiver, type Receiver } from '../../../test/peers.js';
import { processDue } from './worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';

// Issue 14, item 4: push endpoints get the webhooks' SSRF guard, and keys are checked when stored.
const subscribe = (t: TestApp, headers: Headers, endpoint: string, keys: unknown = browserKeys().json) =>
  t.app.inject({ method: 'POST', url: '/v1/push/subscriptions', headers, payload: { endpoint, keys } });
const fields = (res: { body: string }) => body<{ details?: { field: string }[] }>(res as never).details?.map((d) => d.field) ?? [];

/** A port on 127.0.0.1 where nothing listens. */
function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

describe('push subscriptions and deliveries: keys and the SSRF guard', () => {
  let t: TestApp;
  let key: Headers;
  let userId: number;
  let pushService: Receiver;
  let tls: { key: string; cert: string };
  before(async () => {
    t = await buildTestApp();
    const user = await signUp(t.app, { name: 'Pia Push' });
    userId = user.id;
    key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    tls = selfSignedCert();
    pushService = await startReceiver({ tls });
    pushService.respond = () => ({ status: 201 });
  });
  after(async () => {
    await t.close();
    await pushService.close();
  });

  test('keys a browser could not have made are a 422 naming the key', async () => {
    const good = browserKeys().json;
    const compressed = createECDH('prime256v1');
    compressed.generateKeys();
    const offCurve = Buffer.from(good.p256dh, 'base64url');
    offCurve[64]! ^= 1;
    const cases: [unknown, string[]][] = [
      [{ p256dh: 'p', auth: good.auth }, ['keys.p256dh']],
      [{ p256dh: compressed.getPublicKey(undefined, 'compressed').toString('base64url'), auth: good.auth }, ['keys.p256dh']],
      [{ p256dh: offCurve.toString('base64url'), auth: good.auth }, ['keys.p256dh']],
      [{ p256dh: `${good.p256dh}!`, auth: good.auth }, ['keys.p256dh']],
      [{ p256dh: good.p256dh, auth: randomBytes(15).toString('base64url') }, ['keys.auth']],
      [{ p256dh: 'x', auth: 'y' }, ['keys.p256dh', 'keys.auth']],
    ];
    for (const [keys, expected] of cases) {
      const res = await subscribe(t, key, 'https://push.example.com/a', keys);
      assert.equal(res.statusCode, 422, `${JSON.stringify(keys)}: ${res.body}`);
      assert.deepEqual(fields(res), expected, JSON.stringify(keys));
    }
    // Padded base64url, as some clients send it, is the same key.
    const padded = { p256dh: `${good.p256dh}=`, auth: `${good.auth}==` };
    assert.equal((await subscribe(t, key, 'https://push.example.com/padded', padded)).statusCode, 201);
  });

  test('a plainly private endpoint is refused at subscription; a public one is stored', async () => {
    for (const endpoint of ['https://127.0.0.1:8443/x', 'https://2130706433/x', 'https://[::1]/x', 'https://[::ffff:7f00:1]/x', 'https://localhost/x', 'https://app.localhost./x', 'https://169.254.169.254/latest', 'https://10.0.0.5/x', 'https://192.168.1.1/x']) {
      const res = await subscribe(t, key, endpoint);
      assert.equal(res.statusCode, 422, `${endpoint}: ${res.body}`);
      assert.deepEqual(fields(res), ['endpoint'], endpoint);
    }
    assert.equal((await subscribe(t, key, 'https://fcm.googleapis.com/fcm/send/abc')).statusCode, 201);
  });

  test('a private endpoint stored anyway (an older row, a name resolving inward) is refused at connect, permanently, and never contacted', async () => {
    await t.ctx.db.deleteFrom('push_subscriptions').where('user_id', '=', userId).execute();
    const port = new URL(pushService.origin).port;
    const now = new Date().toISOString();
    for (const endpoint of [`https://127.0.0.1:${port}/push/literal`, `https://localhost:${port}/push/name`]) {
      await t.ctx.db.insertInto('push_subscriptions').values({ user_id: userId, livemode: 1, endpoint, ...browserKeys().json, created_at: now }).execute();
    }
    pushService.requests.length = 0;
    const created = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: key, payload: { title: 'Guarded' } });
    assert.equal(created.statusCode, 201, created.body);
    await processDue(t.ctx, createSenders(t.ctx, new https.Agent({ ca: tls.cert })));
    const [push] = (await listDeliveries(t.app, key)).filter((d) => d.kind === 'push');
    assert.equal(push?.status, 'failed', 'refused addresses are not retried');
    assert.equal(push?.last_error, 'refused: not a public address');
    assert.equal(pushService.requests.length, 0, 'the private service was never contacted');
  });

  describe('with MUSTER_ALLOW_PRIVATE_WEBHOOKS', () => {
    let open: TestApp;
    before(async () => {
      open = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' });
    });
    after(() => open.close());

    test('private endpoints are accepted, and a connection error is logged without its address, port or errno', async () => {
      const user = await signUp(open.app, { name: 'Ola Open' });
      const k = { 'x-api-key': (await createKey(open.app, user.cookie, 'live')).key };
      const port = await deadPort();
      assert.equal((await subscribe(open, k, `https://127.0.0.1:${port}/push/closed`)).statusCode, 201);
      await open.app.inject({ method: 'POST', url: '/v1/tickets', headers: k, payload: { title: 'Closed port' } });
      await processDue(open.ctx, createSenders(open.ctx));
      const [push] = (await listDeliveries(open.app, k)).filter((d) => d.kind === 'push');
      assert.equal(push?.status, 'pending', 'retried later');
      assert.equal(push?.last_error, 'the push service could not be reached');
      const errors = JSON.stringify(push?.attempt_log.map((a) => a.error));
      assert.equal(errors, '["the push service could not be reached"]');
      assert.ok(!errors.includes('ECONNREFUSED') && !errors.includes(String(port)));
    });
  });
});
