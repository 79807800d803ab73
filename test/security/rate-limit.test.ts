import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { createKey, signUp, type TestUser } from '../factories.js';
import { body, buildTestApp, testDialect, type TestApp, type Headers } from '../helpers.js';

const WINDOW_MS = 60_000;
const LIMITS = { RATE_LIMIT_API: '5', RATE_LIMIT_AUTH: '3', RATE_LIMIT_BOOKING: '2', RATE_LIMIT_PUBLIC: '4', RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) };
const REDIS_URL = 'redis://127.0.0.1:6379';

function assertLimited(res: LightMyRequestResponse) {
  assert.equal(res.statusCode, 429, res.body);
  assert.deepEqual(body(res), { error: 'Too many requests', code: 'rate_limited' });
  assert.match(String(res.headers['retry-after']), /^\d+$/);
  assert.equal(res.headers['ratelimit-remaining'], '0');
}

/** Puts the test clock at the start of the next window (plus `offsetMs`): every bucket starts empty. */
function nextWindow(t: TestApp, offsetMs = 0) {
  const now = t.clock.now().getTime();
  t.clock.set(new Date((Math.floor(now / WINDOW_MS) + 1) * WINDOW_MS + offsetMs));
}

describe(`rate limits (${testDialect}, counters in memory)`, () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let aliceLive: Headers;
  let aliceLive2: Headers;
  let aliceTest: Headers;
  let bobLive: Headers;
  before(async () => {
    t = await buildTestApp(LIMITS);
    alice = await signUp(t.app, { name: 'Alice' });
    nextWindow(t);
    bob = await signUp(t.app, { name: 'Bob' });
    aliceLive = { 'x-api-key': (await createKey(t.app, alice.cookie, 'live')).key };
    aliceLive2 = { authorization: `Bearer ${(await createKey(t.app, alice.cookie, 'live', 'second')).key}` };
    aliceTest = { 'x-api-key': (await createKey(t.app, alice.cookie, 'test')).key };
    bobLive = { 'x-api-key': (await createKey(t.app, bob.cookie, 'live')).key };
    nextWindow(t);
    const et = await t.app.inject({ method: 'POST', url: '/v1/event-types', headers: bobLive, payload: { name: 'Call', slug: 'call', duration_minutes: 30 } });
    assert.equal(et.statusCode, 201, et.body);
  });
  after(() => t.close());

  const me = (headers: Headers, remoteAddress?: string) => t.app.inject({ url: '/v1/auth/me', headers, ...(remoteAddress ? { remoteAddress } : {}) });

  test('a key gets its limit, then 429 with an integer Retry-After, then recovers in the next window', async () => {
    nextWindow(t, 10_000);
    for (let i = 0; i < 5; i++) {
      const res = await me(aliceLive);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['ratelimit-limit'], '5');
      assert.equal(res.headers['ratelimit-remaining'], String(4 - i));
      assert.equal(res.headers['ratelimit-reset'], '50');
    }
    const refused = await me(aliceLive);
    assertLimited(refused);
    assert.equal(refused.headers['retry-after'], '50');
    t.clock.advance(49_000);
    assertLimited(await me(aliceLive));
    t.clock.advance(1_000);
    const back = await me(aliceLive);
    assert.equal(back.statusCode, 200);
    assert.equal(back.headers['ratelimit-remaining'], '4');
  });

  test('buckets are per user and mode: every live credential of a user shares one, test mode and other users have their own', async () => {
    nextWindow(t);
    for (let i = 0; i < 3; i++) assert.equal((await me(aliceLive)).statusCode, 200);
    for (let i = 0; i < 2; i++) assert.equal((await me(aliceLive2)).statusCode, 200);
    assertLimited(await me(aliceLive));
    assertLimited(await me(aliceLive2));
    assertLimited(await me({ cookie: alice.cookie }));
    // Not keyed by address: the same user from elsewhere is still limited.
    assertLimited(await me(aliceLive, '198.51.100.7'));
    const testMode = await me(aliceTest);
    assert.equal(testMode.statusCode, 200);
    assert.equal(testMode.headers['ratelimit-remaining'], '4');
    const other = await me(bobLive);
    assert.equal(other.statusCode, 200);
    assert.equal(other.headers['ratelimit-remaining'], '4');
  });

  test('sign-in routes are strict and counted per address, failures included', async () => {
    nextWindow(t);
    const wrong = { email: alice.email, password: 'wrong password!' };
    for (let i = 0; i < 2; i++) assert.equal((await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: wrong })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: alice.email } })).statusCode, 200);
    // The limit is met: even the right password waits.
    assertLimited(await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: alice.email, password: alice.password } }));
    assertLimited(await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', payload: { email: alice.email, code: '000000' } }));
    assertLimited(await t.app.inject({ method: 'POST', url: '/v1/users', payload: { email: 'new@example.com', password: 'long enough', name: 'New' } }));
    // Another address is another bucket; the API bucket of the user is untouched.
    const elsewhere = await t.app.inject({ method: 'POST', url: '/v1/auth/login', remoteAddress: '198.51.100.8', payload: { email: alice.email, password: alice.password } });
    assert.equal(elsewhere.statusCode, 200, elsewhere.body);
    assert.equal((await me(aliceLive)).statusCode, 200);
  });

  test('public booking posts and public reads are limited per address', async () => {
    nextWindow(t);
    const book = (i: number, remoteAddress = '127.0.0.1') =>
      t.app.inject({ method: 'POST', url: `/v1/book/${bob.slug}/call`, remoteAddress, payload: { attendee_name: 'G', attendee_email: `g${i}@example.com`, start_time: `2026-01-0${7 + (i % 3)}T1${i}:00:00.000Z` } });
    assert.equal((await book(0)).statusCode, 201);
    assert.equal((await book(1)).statusCode, 201);
    assertLimited(await book(2));
    assert.equal((await book(3, '203.0.113.20')).statusCode, 201);

    const slots = (remoteAddress = '127.0.0.1') => t.app.inject({ url: `/v1/slots/${bob.slug}/call?date=2026-01-09`, remoteAddress });
    for (let i = 0; i < 4; i++) assert.equal((await slots()).statusCode, 200);
    assertLimited(await slots());
    assert.equal((await slots('203.0.113.21')).statusCode, 200);
  });

  test('health checks and pages are not limited', async () => {
    nextWindow(t);
    for (let i = 0; i < 8; i++) {
      const res = await t.app.inject({ url: '/healthz' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-limit'], undefined);
    }
    for (let i = 0; i < 6; i++) assert.equal((await t.app.inject({ url: '/pages.css' })).statusCode, 200);
  });

  test('the group is decided per route and method: HEADs of a page first do not make its GETs limited', async () => {
    // The group is kept per route once decided; a HEAD (counted as a public read) must not decide it for GET.
    nextWindow(t);
    for (let i = 0; i < 3; i++) await t.app.inject({ method: 'HEAD', url: '/pages.css' });
    nextWindow(t);
    for (let i = 0; i < 6; i++) {
      const res = await t.app.inject({ url: '/pages.css' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['ratelimit-limit'], undefined);
    }
  });
});

describe(`rate limits (${testDialect}, counters in Redis shared by two instances)`, () => {
  const prefix = `t${randomBytes(4).toString('hex')}:`;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await buildTestApp({ ...LIMITS, REDIS_URL, REDIS_PREFIX: prefix });
    b = await buildTestApp({ ...LIMITS, REDIS_URL, REDIS_PREFIX: prefix });
    b.clock.set(a.clock.now());
  });
  after(async () => {
    await a.close();
    await b.close();
    const r = new Redis(REDIS_URL);
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    r.disconnect();
  });

  const read = (t: TestApp, remoteAddress: string) => t.app.inject({ url: '/v1/slots/nobody/nothing?date=2026-01-09', remoteAddress });

  test('one address is counted once across instances, then recovers in the next window', async () => {
    nextWindow(a);
    b.clock.set(a.clock.now());
    const ip = '192.0.2.44';
    assert.equal((await read(a, ip)).headers['ratelimit-remaining'], '3');
    assert.equal((await read(b, ip)).headers['ratelimit-remaining'], '2');
    assert.equal((await read(a, ip)).headers['ratelimit-remaining'], '1');
    assert.equal((await read(b, ip)).headers['ratelimit-remaining'], '0');
    assertLimited(await read(a, ip));
    assertLimited(await read(b, ip));
    assert.equal((await read(b, '192.0.2.45')).statusCode, 404);
    const r = new Redis(REDIS_URL);
    const keys = await r.keys(`${prefix}rl:public:ip:${ip}:*`);
    r.disconnect();
    assert.equal(keys.length, 1);

    nextWindow(a);
    b.clock.set(a.clock.now());
    assert.equal((await read(b, ip)).statusCode, 404);
  });
});
