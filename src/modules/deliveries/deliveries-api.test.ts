import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { flag } from '../../db/schema.js';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, setPlan, dropConfirmationEmails, signUp, type TestUser } from '../../../test/factories.js';
import { bookAs, bookPublic, createEventType, listDeliveries, parseIcs, pathOf, startReceiver, type Booking, type Delivery, type Receiver } from '../../../test/peers.js';
import { processDue, type Senders } from './worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';

describe('deliveries API and calendar feeds', () => {
  let t: TestApp;
  let senders: Senders;
  let receiver: Receiver;
  let alice: TestUser;
  let bob: TestUser;
  let aliceKey: Headers;
  let aliceTest: Headers;
  let bobKey: Headers;
  let failed: Delivery;

  before(async () => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 410 });
    t = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' });
    senders = createSenders(t.ctx);
    const root = await signUp(t.app, { name: 'Root' });
    alice = await signUp(t.app, { name: 'Alice Host' });
    bob = await signUp(t.app, { name: 'Bob Host' });
    await setPlan(t.app, root.cookie, alice.id, 'agency');
    aliceKey = { 'x-api-key': (await createKey(t.app, alice.cookie, 'live')).key };
    aliceTest = { 'x-api-key': (await createKey(t.app, alice.cookie, 'test')).key };
    bobKey = { 'x-api-key': (await createKey(t.app, bob.cookie, 'live')).key };
    await dropConfirmationEmails(t.app);

    // Alice: a booking whose webhook fails for good (410), emails (skipped: no SMTP_URL), an incident, test-mode rows.
    await createEventType(t.app, aliceKey, { name: 'Hooked', slug: 'hooked', webhook_url: `${receiver.origin}/hook` });
    await bookPublic(t.app, t.clock, alice.slug, 'hooked');
    await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: aliceKey, payload: { title: 'Alice incident' } });
    await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: aliceTest, payload: { title: 'Alice test incident' } });
    // Bob: his own.
    await createEventType(t.app, bobKey, { name: 'Bobs', slug: 'bobs' });
    await bookPublic(t.app, t.clock, bob.slug, 'bobs');
    await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: bobKey, payload: { title: 'Bob incident' } });
    while ((await processDue(t.ctx, senders)) > 0);
    failed = (await listDeliveries(t.app, aliceKey)).find((d) => d.kind === 'webhook')!;
    assert.equal(failed.status, 'failed');
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const ownRows = (userId: number, live: boolean) =>
    t.ctx.db.selectFrom('outbox').select('id').where('user_id', '=', userId).where('livemode', '=', flag(live)).orderBy('id', 'desc').execute();

  describe('GET /v1/deliveries', () => {
    test("lists only the caller's deliveries of the caller's mode, newest first, with their attempts", async () => {
      const mine = await listDeliveries(t.app, aliceKey);
      assert.deepEqual(
        mine.map((d) => d.id),
        (await ownRows(alice.id, true)).map((r) => r.id),
      );
      assert.deepEqual(mine.map((d) => [d.kind, d.topic, d.status]).sort(), [
        ['email', 'booking.created', 'skipped'],
        ['email', 'booking.created.host', 'skipped'],
        ['phone', 'incident.created', 'skipped'],
        ['push', 'incident.created', 'skipped'],
        ['webhook', 'booking.created', 'failed'],
      ]);
      for (let i = 1; i < mine.length; i += 1) {
        assert.ok(mine[i - 1]!.id > mine[i]!.id && mine[i - 1]!.created_at >= mine[i]!.created_at, 'newest first');
      }
      assert.deepEqual(failed.attempt_log.map((a) => [a.attempt, a.outcome, a.status_code]), [[1, 'failed', 410]]);
      const phone = mine.find((d) => d.kind === 'phone')!;
      assert.deepEqual(phone.attempt_log, [], 'recorded as skipped without an attempt');

      // The same user through a cookie (live) sees the same; the test key sees only test rows.
      assert.deepEqual((await listDeliveries(t.app, { cookie: alice.cookie })).map((d) => d.id), mine.map((d) => d.id));
      const test = await listDeliveries(t.app, aliceTest);
      assert.deepEqual(test.map((d) => d.id), (await ownRows(alice.id, false)).map((r) => r.id));
      // Alice has no phone: her phone alert is skipped in either mode.
      assert.deepEqual(test.map((d) => [d.kind, d.status]).sort(), [['phone', 'skipped'], ['push', 'suppressed']]);
      const bobs = await listDeliveries(t.app, bobKey);
      assert.deepEqual(bobs.map((d) => d.id), (await ownRows(bob.id, true)).map((r) => r.id));
      assert.equal(bobs.filter((d) => mine.some((m) => m.id === d.id)).length, 0);
    });

    test('pages with limit, page and has_more', async () => {
      const all = await listDeliveries(t.app, aliceKey);
      const page = async (n: number) => {
        const res = await t.app.inject({ method: 'GET', url: `/v1/deliveries?limit=2&page=${n}`, headers: aliceKey });
        assert.equal(res.statusCode, 200);
        return body<{ deliveries: Delivery[]; page: number; limit: number; has_more: boolean }>(res);
      };
      const [p1, p2, p3] = [await page(1), await page(2), await page(3)];
      assert.deepEqual([p1.page, p1.limit, p1.has_more, p2.has_more, p3.has_more], [1, 2, true, true, false]);
      assert.deepEqual([...p1.deliveries, ...p2.deliveries, ...p3.deliveries].map((d) => d.id), all.map((d) => d.id));
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/deliveries?limit=500', headers: aliceKey })).statusCode, 422);
    });
  });

  describe('POST /v1/deliveries/:id/retry', () => {
    test("another user's failed delivery, a delivery of the other mode, a non-failed one or an unknown id: 404", async () => {
      const retry = (headers: Headers, id: number) => t.app.inject({ method: 'POST', url: `/v1/deliveries/${id}/retry`, headers });
      assert.equal((await retry(bobKey, failed.id)).statusCode, 404);
      assert.equal((await retry(aliceTest, failed.id)).statusCode, 404);
      const skipped = (await listDeliveries(t.app, aliceKey)).find((d) => d.status === 'skipped')!;
      assert.equal((await retry(aliceKey, skipped.id)).statusCode, 404);
      const suppressed = (await listDeliveries(t.app, aliceTest)).find((d) => d.status === 'suppressed')!;
      assert.equal((await retry(aliceTest, suppressed.id)).statusCode, 404);
      assert.equal((await retry(aliceKey, 999_999)).statusCode, 404);
      const row = await t.ctx.db.selectFrom('outbox').select('status').where('id', '=', failed.id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'failed', 'untouched');
    });

    test("requeues the caller's failed delivery, which the worker then sends", async () => {
      receiver.respond = () => ({ status: 200 });
      const res = await t.app.inject({ method: 'POST', url: `/v1/deliveries/${failed.id}/retry`, headers: aliceKey });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(body(res), { id: failed.id, status: 'pending' });
      const before = receiver.requests.length;
      assert.equal(await processDue(t.ctx, senders), 1);
      assert.equal(receiver.requests.length, before + 1);
      const d = (await listDeliveries(t.app, aliceKey)).find((x) => x.id === failed.id)!;
      assert.equal(d.status, 'sent');
      assert.deepEqual(d.attempt_log.map((a) => [a.attempt, a.outcome, a.status_code]), [
        [1, 'failed', 410],
        [2, 'sent', 200],
      ]);
      assert.equal((await t.app.inject({ method: 'POST', url: `/v1/deliveries/${failed.id}/retry`, headers: aliceKey })).statusCode, 404, 'sent: nothing to retry');
    });
  });

  describe('calendar feed', () => {
    let confirmed: Booking;
    let pending: Booking;
    let feedPath: string;

    before(async () => {
      await createEventType(t.app, aliceKey, { name: 'Consult', slug: 'consult' });
      await createEventType(t.app, aliceKey, { name: 'Approval', slug: 'approval', requires_confirmation: true });
      const testEt = await createEventType(t.app, aliceTest, { name: 'Sandbox', slug: 'sandbox' });
      confirmed = await bookPublic(t.app, t.clock, alice.slug, 'consult');
      pending = await bookPublic(t.app, t.clock, alice.slug, 'approval');
      const cancelled = await bookPublic(t.app, t.clock, alice.slug, 'consult');
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/bookings/${cancelled.id}`, headers: aliceKey, payload: {} })).statusCode, 200);
      await bookAs(t.app, t.clock, aliceTest, testEt.id);
    });

    const feed = async (path: string) => {
      const res = await t.app.inject({ method: 'GET', url: path });
      return { res, cal: res.statusCode === 200 ? parseIcs(res.body) : undefined };
    };

    test('GET /v1/calendar gives a private URL answering text/calendar with the upcoming live bookings', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/calendar', headers: aliceKey });
      assert.equal(res.statusCode, 200);
      const { url } = body<{ url: string }>(res);
      assert.match(url, /^http:\/\/muster\.test\/calendar\/[A-Za-z0-9._-]+\.ics$/);
      feedPath = pathOf(url);
      const { res: got, cal } = await feed(feedPath);
      assert.equal(got.statusCode, 200);
      assert.match(String(got.headers['content-type']), /^text\/calendar/);
      assert.match(String(got.headers['cache-control']), /private/);
      const events = cal!.events.sort((a, b) => a.start.localeCompare(b.start));
      // The first booking of this file (the webhook one) is upcoming and live too.
      const expected = [confirmed, pending].map((b) => b.id);
      assert.deepEqual(events.map((e) => e.uid.replace(/@muster$/, '')).filter((id) => expected.includes(id)).sort(), [...expected].sort());
      assert.equal(events.length, 3, 'the hooked booking, the confirmed one and the pending one: no cancelled, test-mode or other host');
      for (const b of [confirmed, pending]) {
        const e = events.find((x) => x.uid === `${b.id}@muster`)!;
        assert.equal(e.start, b.start_time);
        assert.equal(e.end, b.end_time);
        assert.equal(e.status, b === pending ? 'TENTATIVE' : 'CONFIRMED');
      }
      // Bob's feed has only Bob's booking.
      const bobsUrl = body<{ url: string }>(await t.app.inject({ method: 'GET', url: '/v1/calendar', headers: bobKey })).url;
      assert.equal((await feed(pathOf(bobsUrl))).cal!.events.length, 1);
    });

    test('rotating makes the old URL 404 and the new one work; a forged token is 404', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/calendar/rotate', headers: aliceKey });
      assert.equal(res.statusCode, 200);
      const fresh = pathOf(body<{ url: string }>(res).url);
      assert.notEqual(fresh, feedPath);
      assert.equal((await feed(feedPath)).res.statusCode, 404);
      const now = await feed(fresh);
      assert.equal(now.res.statusCode, 200);
      assert.equal(now.cal!.events.length, 3);
      assert.equal(body<{ url: string }>(await t.app.inject({ method: 'GET', url: '/v1/calendar', headers: aliceKey })).url, `http://muster.test${fresh}`);

      const token = fresh.replace(/^\/calendar\//, '').replace(/\.ics$/, '');
      const forged = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.slice(-1);
      assert.equal((await feed(`/calendar/${forged}.ics`)).res.statusCode, 404);
      assert.equal((await feed('/calendar/not-a-token.ics')).res.statusCode, 404);
    });
  });

  test('authenticated routes answer 401 without credentials; the VAPID key is public', async () => {
    for (const [method, url, payload] of [
      ['GET', '/v1/deliveries', undefined],
      ['POST', `/v1/deliveries/${failed.id}/retry`, undefined],
      ['POST', '/v1/push/subscriptions', { endpoint: 'https://push.example.com/x', keys: { p256dh: 'a', auth: 'b' } }],
      ['DELETE', '/v1/push/subscriptions', { endpoint: 'https://push.example.com/x' }],
      ['GET', '/v1/calendar', undefined],
      ['POST', '/v1/calendar/rotate', undefined],
    ] as const) {
      const res = await t.app.inject({ method, url, ...(payload ? { payload } : {}) });
      assert.equal(res.statusCode, 401, `${method} ${url}`);
      assert.equal(body<{ code: string }>(res).code, 'unauthorized');
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/push/public-key' })).statusCode, 200);
  });
});
