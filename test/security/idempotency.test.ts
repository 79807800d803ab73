import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createContext } from '../../src/context.js';
import { iso } from '../../src/lib/clock.js';
import { requestFingerprint } from '../../src/plugins/idempotency.js';
import { createKey, signUp, type TestUser } from '../factories.js';
import { body, buildTestApp, testDialect, type TestApp, type Headers } from '../helpers.js';

interface ErrorBody {
  error: string;
  code: string;
  details?: { field: string; message: string }[];
}

const SLOT = '2026-01-07T10:00:00.000Z';
const DAY = 24 * 60 * 60 * 1000;
const LOCK_TIMEOUT_MS = 5_000;

describe(`Idempotency-Key (${testDialect})`, () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let aliceLive: Headers;
  let aliceTest: Headers;
  before(async () => {
    t = await buildTestApp({ IDEMPOTENCY_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS) });
    alice = await signUp(t.app, { name: 'Alice' });
    bob = await signUp(t.app, { name: 'Bob' });
    aliceLive = { 'x-api-key': (await createKey(t.app, alice.cookie, 'live')).key };
    aliceTest = { 'x-api-key': (await createKey(t.app, alice.cookie, 'test')).key };
  });
  after(() => t.close());

  const post = (url: string, headers: Headers, payload: object) => t.app.inject({ method: 'POST', url, headers, payload });
  const countIncidents = async (title: string) =>
    Number((await t.ctx.db.selectFrom('incidents').select((eb) => eb.fn.countAll().as('n')).where('title', '=', title).executeTakeFirstOrThrow()).n);
  const countBookings = async (email: string) =>
    Number((await t.ctx.db.selectFrom('bookings').select((eb) => eb.fn.countAll().as('n')).where('attendee_email', '=', email).executeTakeFirstOrThrow()).n);
  const countOutbox = async (topic: string) =>
    Number((await t.ctx.db.selectFrom('outbox').select((eb) => eb.fn.countAll().as('n')).where('topic', '=', topic).executeTakeFirstOrThrow()).n);
  function assertKeyError(res: LightMyRequestResponse, status: number) {
    assert.equal(res.statusCode, status, res.body);
    const b = body<ErrorBody>(res);
    assert.equal(b.code, 'validation_failed');
    assert.equal(b.details?.[0]?.field, 'Idempotency-Key');
  }

  async function eventType(host: TestUser, slug: string) {
    const res = await post('/v1/event-types', { cookie: host.cookie }, { name: slug, slug, duration_minutes: 30 });
    assert.equal(res.statusCode, 201, res.body);
    return body<{ id: number }>(res);
  }

  test('the same key and body returns the first response without a second effect', async () => {
    const headers = { ...aliceLive, 'idempotency-key': 'create-ticket-1' };
    const first = await post('/v1/tickets', headers, { title: 'Pump down', priority: 'high' });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const pushes = await countOutbox('incident.created');

    const again = await post('/v1/tickets', headers, { priority: 'high', title: 'Pump down' });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(again), body(first));
    assert.equal(await countIncidents('Pump down'), 1);
    assert.equal(await countOutbox('incident.created'), pushes, 'no second push or phone alert queued');

    // Without a key every request is a new one.
    assert.equal((await post('/v1/tickets', aliceLive, { title: 'Pump down', priority: 'high' })).statusCode, 201);
    assert.equal(await countIncidents('Pump down'), 2);
  });

  test('the same key with another body, or on another route, is 422 naming the header', async () => {
    const headers = { ...aliceLive, 'idempotency-key': 'reused' };
    assert.equal((await post('/v1/tickets', headers, { title: 'First use' })).statusCode, 201);
    assertKeyError(await post('/v1/tickets', headers, { title: 'Another title' }), 422);
    assertKeyError(await post('/v1/incidents', headers, { title: 'First use' }), 422);
    assertKeyError(await post('/v1/signals', headers, { type: 'note', note: 'hi' }), 422);
    assert.equal(await countIncidents('Another title'), 0);
  });

  test('keys are scoped to the user and the mode of the credential', async () => {
    const key = { 'idempotency-key': 'shared-key' };
    const live = await post('/v1/signals', { ...aliceLive, ...key }, { type: 'note', note: 'scoped' });
    const viaCookie = await post('/v1/signals', { cookie: alice.cookie, ...key }, { type: 'note', note: 'scoped' });
    const testMode = await post('/v1/signals', { ...aliceTest, ...key }, { type: 'note', note: 'scoped' });
    const otherUser = await post('/v1/signals', { cookie: bob.cookie, ...key }, { type: 'note', note: 'scoped' });
    for (const r of [live, viaCookie, testMode, otherUser]) assert.equal(r.statusCode, 201, r.body);
    // A live key and the (live) session of one user are one account: the replay.
    assert.equal(viaCookie.headers['idempotent-replayed'], 'true');
    assert.equal(body(viaCookie).Id, body(live).Id);
    // Test mode and another user each had their own effect.
    assert.equal(testMode.headers['idempotent-replayed'], undefined);
    assert.equal(otherUser.headers['idempotent-replayed'], undefined);
    assert.equal(new Set([body(live).Id, body(testMode).Id, body(otherUser).Id]).size, 3);
  });

  test('a malformed key is 422', async () => {
    for (const bad of ['x'.repeat(256), 'tab\there', 'ünïcode']) {
      assertKeyError(await post('/v1/tickets', { ...aliceLive, 'idempotency-key': bad }, { title: 'Bad key' }), 422);
    }
    assert.equal(await countIncidents('Bad key'), 0);
    assert.equal((await post('/v1/tickets', { ...aliceLive, 'idempotency-key': 'x'.repeat(255) }, { title: 'Long key' })).statusCode, 201);
  });

  test('a 4xx answer is stored and replayed; validation failures are not', async () => {
    const host = await signUp(t.app, { name: 'Four Host' });
    await eventType(host, 'four');
    const url = `/v1/book/${host.slug}/four`;
    const taken = await post(url, {}, { attendee_name: 'First', attendee_email: 'first-4xx@example.com', start_time: SLOT });
    assert.equal(taken.statusCode, 201, taken.body);
    const payload = { attendee_name: 'Late', attendee_email: 'late-4xx@example.com', start_time: SLOT };
    const refused = await post(url, { 'idempotency-key': 'late-1' }, payload);
    assert.equal(refused.statusCode, 409);
    const again = await post(url, { 'idempotency-key': 'late-1' }, payload);
    assert.equal(again.statusCode, 409);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(again), body(refused));

    // A body that fails validation never claims the key: the corrected body may use it.
    const invalid = await post('/v1/tickets', { ...aliceLive, 'idempotency-key': 'fix-me' }, { title: '' });
    assert.equal(invalid.statusCode, 422);
    assert.equal((await post('/v1/tickets', { ...aliceLive, 'idempotency-key': 'fix-me' }, { title: 'Fixed' })).statusCode, 201);
  });

  test('concurrent requests with one key have one effect (authenticated booking)', async () => {
    const host = await signUp(t.app, { name: 'Busy Host' });
    const hostKey = { 'x-api-key': (await createKey(t.app, host.cookie, 'live')).key };
    const et = await eventType(host, 'busy');
    const payload = { event_type_id: et.id, attendee_name: 'Racer', attendee_email: 'racer-idem@example.com', start_time: '2026-01-08T10:00:00.000Z' };
    const results = await Promise.all(Array.from({ length: 20 }, () => post('/v1/bookings', { ...hostKey, 'idempotency-key': 'one-booking' }, payload)));
    const fresh = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    const replayed = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === 'true');
    const inFlight = results.filter((r) => r.statusCode === 409);
    assert.equal(fresh.length, 1, results.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
    assert.equal(fresh.length + replayed.length + inFlight.length, 20);
    for (const r of replayed) assert.deepEqual(body(r), body(fresh[0]!));
    for (const r of inFlight) {
      assert.deepEqual(body(r), { error: 'A request with this Idempotency-Key is still in progress', code: 'conflict' });
      assert.equal(r.headers['retry-after'], '1');
    }
    assert.equal(await countBookings('racer-idem@example.com'), 1);
    // Once the first has answered, every retry is its replay.
    const later = await post('/v1/bookings', { ...hostKey, 'idempotency-key': 'one-booking' }, payload);
    assert.equal(later.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(later), body(fresh[0]!));
  });

  test('concurrent public booking posts with one key from one address have one effect', async () => {
    const host = await signUp(t.app, { name: 'Public Host' });
    await eventType(host, 'pub');
    const payload = { attendee_name: 'Guest', attendee_email: 'guest-idem@example.com', start_time: SLOT };
    const results = await Promise.all(Array.from({ length: 10 }, () => post(`/v1/book/${host.slug}/pub`, { 'idempotency-key': 'guest-1' }, payload)));
    const fresh = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    assert.equal(fresh.length, 1);
    // Every other answer is the replay or "still in progress": none reached the booking (no slot_unavailable).
    for (const r of results.filter((x) => x !== fresh[0])) {
      if (r.statusCode === 201) assert.deepEqual(body(r), body(fresh[0]!));
      else assert.deepEqual([r.statusCode, body(r).code], [409, 'conflict']);
    }
    assert.equal(await countBookings('guest-idem@example.com'), 1);
    // Another address with the same key is another client.
    const elsewhere = await t.app.inject({ method: 'POST', url: `/v1/book/${host.slug}/pub`, remoteAddress: '203.0.113.9', headers: { 'idempotency-key': 'guest-1' }, payload });
    assert.equal(elsewhere.statusCode, 409);
    assert.equal(body(elsewhere).code, 'slot_unavailable');
  });

  test('a request still in flight is 409; abandoned past the lock timeout, a retry runs it once', async () => {
    // What a process killed mid-request leaves behind: the claim, no effect.
    const payload = { title: 'Crashed' };
    const now = t.clock.now();
    await t.ctx.db
      .insertInto('idempotency_keys')
      .values({
        scope: `user:${alice.id}:live`,
        key: 'crash-1',
        fingerprint: requestFingerprint('POST', '/v1/tickets', payload),
        state: 'pending',
        lock_token: 'dead-process',
        locked_at: iso(now),
        status_code: null,
        response_body: null,
        created_at: iso(now),
      })
      .execute();
    const headers = { ...aliceLive, 'idempotency-key': 'crash-1' };
    const busy = await post('/v1/tickets', headers, payload);
    assert.equal(busy.statusCode, 409);
    assert.equal(busy.headers['retry-after'], '1');
    assertKeyError(await post('/v1/tickets', headers, { title: 'Other' }), 422);

    t.clock.advance(LOCK_TIMEOUT_MS + 1);
    const retried = await post('/v1/tickets', headers, payload);
    assert.equal(retried.statusCode, 201, retried.body);
    assert.equal(retried.headers['idempotent-replayed'], undefined);
    const replay = await post('/v1/tickets', headers, payload);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(body(replay), body(retried));
    assert.equal(await countIncidents('Crashed'), 1);
  });

  test('keys expire after 24 hours: then the key is new again, and old rows are purged', async () => {
    const headers = { ...aliceLive, 'idempotency-key': 'daily' };
    const first = await post('/v1/tickets', headers, { title: 'Daily check' });
    t.clock.advance(DAY - 1);
    assert.equal((await post('/v1/tickets', headers, { title: 'Daily check' })).headers['idempotent-replayed'], 'true');
    t.clock.advance(2);
    const next = await post('/v1/tickets', headers, { title: 'Daily check' });
    assert.equal(next.statusCode, 201);
    assert.equal(next.headers['idempotent-replayed'], undefined);
    assert.notEqual(body(next).Id, body(first).Id);
    assert.equal(await countIncidents('Daily check'), 2);
    // Every row from before the last 24 hours is gone.
    const cutoff = iso(new Date(t.clock.now().getTime() - DAY));
    const old = await t.ctx.db.selectFrom('idempotency_keys').select('key').where('created_at', '<', cutoff).execute();
    assert.deepEqual(old, []);
  });

  test('after a restart, a new instance on the same database replays the stored response', async () => {
    const own = await buildTestApp();
    try {
      const user = await signUp(own.app, { name: 'Restart' });
      const key = { 'x-api-key': (await createKey(own.app, user.cookie, 'live')).key, 'idempotency-key': 'before-restart' };
      const first = await own.app.inject({ method: 'POST', url: '/v1/signals', headers: key, payload: { type: 'checkin', lat: 1, lng: 2 } });
      assert.equal(first.statusCode, 201, first.body);
      await own.app.close();

      const ctx = await createContext(own.ctx.config, { clock: own.clock });
      const app = await buildApp(ctx);
      try {
        const replay = await app.inject({ method: 'POST', url: '/v1/signals', headers: key, payload: { type: 'checkin', lat: 1, lng: 2 } });
        assert.equal(replay.statusCode, 201);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(body(replay), body(first));
        const n = await ctx.db.selectFrom('signals').select((eb) => eb.fn.countAll().as('n')).where('type', '=', 'checkin').executeTakeFirstOrThrow();
        assert.equal(Number(n.n), 1);
      } finally {
        await app.close();
        await ctx.close();
      }
    } finally {
      await own.close();
    }
  });
});
