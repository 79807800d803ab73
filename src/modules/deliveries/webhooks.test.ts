import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { MINUTE } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, setPlan, dropConfirmationEmails, signUp, type TestUser } from '../../../test/factories.js';
import { bookPublic, createEventType, listDeliveries, pathOf, startReceiver, type Booking, type Delivery, type EventType, type ReceivedRequest, type Receiver } from '../../../test/peers.js';
import { processDue, type Senders } from './worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';

// Long enough that a loaded machine (CI runs suites side by side) answers a live receiver well within it.
const TIMEOUT_MS = 2_000;

interface WebhookBody {
  type: string;
  created_at: string;
  data: Booking & { reason?: string | null };
}

/**
 * Receivers verify signatures with `standardwebhooks`, which checks the timestamp against the
 * real time (5 minutes either way). The worker signs with the test clock, so the tests keep the
 * clock near the real time: `syncClock(offset)` puts it `offset` ms from now.
 */
describe('webhooks to local receivers (MUSTER_ALLOW_PRIVATE_WEBHOOKS=1)', () => {
  let t: TestApp;
  let senders: Senders;
  let root: TestUser;
  let host: TestUser;
  let hostKey: Headers;
  let receiver: Receiver;
  let seq = 0;

  before(async () => {
    t = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
    senders = createSenders(t.ctx);
    root = await signUp(t.app, { name: 'Root' });
    host = await signUp(t.app, { name: 'Hanna Host' });
    await setPlan(t.app, root.cookie, host.id, 'enterprise');
    await dropConfirmationEmails(t.app);
    hostKey = { 'x-api-key': (await createKey(t.app, host.cookie, 'live')).key };
    receiver = await startReceiver();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 200, body: 'ok' });
    syncClock(0);
  });

  const syncClock = (offsetMs: number) => t.clock.set(new Date(Date.now() + offsetMs));
  /** A new event type whose webhook goes to `url` (default: the shared receiver at a path of its own). */
  async function hooked(extra: Record<string, unknown> = {}, url?: string): Promise<EventType & { webhook_secret: string; webhook_url: string }> {
    seq += 1;
    const et = await createEventType(t.app, hostKey, { name: `Hooked ${seq}`, slug: `hooked-${seq}`, webhook_url: url ?? `${receiver.origin}/hooks/${seq}`, ...extra });
    assert.match(et.webhook_secret ?? '', /^whsec_/);
    return et as EventType & { webhook_secret: string; webhook_url: string };
  }
  const book = (et: EventType) => bookPublic(t.app, t.clock, host.slug, et.slug);
  const webhookDeliveries = async (url: string): Promise<Delivery[]> => (await listDeliveries(t.app, hostKey)).filter((d) => d.kind === 'webhook' && d.recipient === url);
  /** Verifies a received request with the library a receiver would use; answers the body. */
  function verified(r: ReceivedRequest, secret: string): WebhookBody {
    const headers = {
      'webhook-id': String(r.headers['webhook-id']),
      'webhook-timestamp': String(r.headers['webhook-timestamp']),
      'webhook-signature': String(r.headers['webhook-signature']),
    };
    return new Webhook(secret).verify(r.text, headers) as WebhookBody;
  }

  test('every booking change is POSTed as a signed {type, created_at, data}', async () => {
    const et = await hooked();
    const pending = await hooked({ requires_confirmation: true });

    const b = await book(et);
    await processDue(t.ctx, senders);
    const later = body<{ slots: { start_time: string }[] }>(await t.app.inject({ method: 'GET', url: `/v1/slots/${host.slug}/${et.slug}?date=${b.start_time.slice(0, 10)}` })).slots.at(-1)!.start_time;
    const moved = await t.app.inject({ method: 'POST', url: `/v1/bookings/${b.id}/reschedule`, headers: hostKey, payload: { start_time: later, reason: 'clash' } });
    assert.equal(moved.statusCode, 200, moved.body);
    await processDue(t.ctx, senders);
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/bookings/${b.id}`, headers: hostKey, payload: {} })).statusCode, 200);
    await processDue(t.ctx, senders);

    const toConfirm = await book(pending);
    const toDecline = await book(pending);
    await processDue(t.ctx, senders);
    const hostMail = async (id: string) => {
      const rows = await t.ctx.db.selectFrom('outbox').select(['payload']).where('topic', '=', 'booking.created.host').orderBy('id').execute();
      const texts = rows.map((r) => (JSON.parse(r.payload) as { text: string }).text);
      const text = texts.filter((x) => x.includes('Confirm: ')).find((x) => x.includes(id === toConfirm.id ? toConfirm.attendee_email : toDecline.attendee_email))!;
      return { confirm: /Confirm: (\S+)/.exec(text)![1]!, decline: /Decline: (\S+)/.exec(text)![1]! };
    };
    const accept = { accept: 'application/json' };
    assert.equal((await t.app.inject({ method: 'GET', url: pathOf((await hostMail(toConfirm.id)).confirm), headers: accept })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: pathOf((await hostMail(toDecline.id)).decline), headers: accept })).statusCode, 200);
    await processDue(t.ctx, senders);

    const got = receiver.requests.map((r) => {
      const secret = r.path === new URL(et.webhook_url).pathname ? et.webhook_secret : pending.webhook_secret;
      return { r, body: verified(r, secret) };
    });
    const line = (path: string, type: string, id: string, status: string) => `${path} ${type} ${id} ${status}`;
    // Deliveries due together are sent concurrently: compare without order.
    assert.deepEqual(
      got.map((g) => line(g.r.path, g.body.type, g.body.data.id, g.body.data.status)).sort(),
      [
        line(`/hooks/${seq - 1}`, 'booking.created', b.id, 'confirmed'),
        line(`/hooks/${seq - 1}`, 'booking.rescheduled', b.id, 'confirmed'),
        line(`/hooks/${seq - 1}`, 'booking.cancelled', b.id, 'cancelled'),
        line(`/hooks/${seq}`, 'booking.created', toConfirm.id, 'pending'),
        line(`/hooks/${seq}`, 'booking.created', toDecline.id, 'pending'),
        line(`/hooks/${seq}`, 'booking.confirmed', toConfirm.id, 'confirmed'),
        line(`/hooks/${seq}`, 'booking.declined', toDecline.id, 'declined'),
      ].sort(),
    );
    for (const { r, body: payload } of got) {
      assert.deepEqual(Object.keys(payload).sort(), ['created_at', 'data', 'type']);
      assert.equal(r.method, 'POST');
      assert.match(String(r.headers['content-type']), /^application\/json/);
      // Globally unique, not the row id (another installation's msg_1 is not this one's).
      assert.match(String(r.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
      assert.match(String(r.headers['webhook-signature']), /^v1,[A-Za-z0-9+/=]+$/);
      assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) * 1000 - Date.now()) < 5 * MINUTE);
      assert.ok(!Number.isNaN(Date.parse(payload.created_at)));
      assert.equal(payload.data.livemode, true);
    }
    assert.equal(new Set(got.map((g) => g.r.headers['webhook-id'])).size, got.length, 'one webhook-id per event');
    const rescheduled = got.find((g) => g.body.type === 'booking.rescheduled')!.body.data;
    assert.equal(rescheduled.start_time, later);
    assert.equal(rescheduled.reason, 'clash');
    // The signature really covers the body and the secret.
    const first = got[0]!.r;
    assert.throws(() => verified({ ...first, text: first.text.replace('booking.', 'booking-') }, et.webhook_secret));
    assert.throws(() => verified(first, pending.webhook_secret));
  });

  test('a receiver failing twice then answering gets three attempts with one webhook-id, after 5 s and 5 min', async () => {
    syncClock(-4 * MINUTE); // the three attempts span about 5 minutes: keep all of them near the real time
    const et = await hooked();
    let calls = 0;
    receiver.respond = () => (++calls <= 2 ? { status: 500, body: 'boom' } : { status: 200, body: 'ok' });
    await book(et);

    assert.equal(await processDue(t.ctx, senders), 3, 'the webhook and two emails (skipped: no SMTP_URL)');
    let [d] = await webhookDeliveries(et.webhook_url);
    assert.equal(d?.status, 'pending');
    const retry1 = Date.parse(d.next_attempt_at!) - t.clock.now().getTime();
    assert.ok(retry1 >= 4_500 && retry1 <= 5_500, `first retry after 5 s ±10% (got ${retry1} ms)`);
    t.clock.advance(4_000);
    assert.equal(await processDue(t.ctx, senders), 0, 'not before the delay');
    t.clock.advance(2_000);
    assert.equal(await processDue(t.ctx, senders), 1);
    [d] = await webhookDeliveries(et.webhook_url);
    assert.equal(d?.status, 'pending');
    const retry2 = Date.parse(d.next_attempt_at!) - t.clock.now().getTime();
    assert.ok(retry2 >= 4.5 * MINUTE && retry2 <= 5.5 * MINUTE, `second retry after 5 min ±10% (got ${retry2} ms)`);
    t.clock.advance(4 * MINUTE);
    assert.equal(await processDue(t.ctx, senders), 0, 'not before the delay');
    t.clock.advance(2 * MINUTE);
    assert.equal(await processDue(t.ctx, senders), 1);

    assert.equal(receiver.requests.length, 3);
    assert.equal(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 1, 'the same webhook-id on every attempt');
    assert.equal(new Set(receiver.requests.map((r) => r.text)).size, 1, 'the same body on every attempt');
    for (const r of receiver.requests) verified(r, et.webhook_secret);
    [d] = await webhookDeliveries(et.webhook_url);
    assert.equal(d?.status, 'sent');
    assert.equal(d?.attempts, 3);
    assert.equal(d?.next_attempt_at, null);
    assert.deepEqual(
      d?.attempt_log.map((a) => [a.attempt, a.outcome, a.status_code]),
      [
        [1, 'failed', 500],
        [2, 'failed', 500],
        [3, 'sent', 200],
      ],
    );
    const at = d.attempt_log.map((a) => Date.parse(a.at));
    assert.ok(at[1]! - at[0]! >= 4_500 && at[2]! - at[1]! >= 4.5 * MINUTE);
    assert.equal(d?.attempt_log[0]?.error, 'HTTP 500');
    assert.equal(await processDue(t.ctx, senders), 0);
  });

  test('a 302 is not followed: the other receiver gets nothing and the attempt is retried later', async () => {
    const other = await startReceiver();
    try {
      const et = await hooked();
      receiver.respond = () => ({ status: 302, headers: { location: `${other.origin}/elsewhere` } });
      await book(et);
      await processDue(t.ctx, senders);
      assert.equal(receiver.requests.length, 1);
      assert.equal(other.requests.length, 0, 'the redirect is not followed');
      let [d] = await webhookDeliveries(et.webhook_url);
      assert.equal(d?.status, 'pending');
      assert.deepEqual(d?.attempt_log.map((a) => [a.outcome, a.status_code]), [['failed', 302]]);
      assert.ok(d?.next_attempt_at && Date.parse(d.next_attempt_at) > t.clock.now().getTime());

      t.clock.advance(6_000);
      await processDue(t.ctx, senders);
      assert.equal(receiver.requests.length, 2, 'retried at the same URL');
      assert.equal(other.requests.length, 0);
      receiver.respond = () => ({ status: 204 });
      t.clock.advance(6 * MINUTE);
      await processDue(t.ctx, senders);
      [d] = await webhookDeliveries(et.webhook_url);
      assert.deepEqual(d?.attempt_log.map((a) => [a.outcome, a.status_code]), [['failed', 302], ['failed', 302], ['sent', 204]]);
      assert.equal(other.requests.length, 0);
    } finally {
      await other.close();
    }
  });

  test("a 410 disables the event type's webhook_url and stops the retries", async () => {
    const et = await hooked();
    receiver.respond = () => ({ status: 410, body: 'gone' });
    await book(et);
    await processDue(t.ctx, senders);
    assert.equal(receiver.requests.length, 1);
    const [d] = await webhookDeliveries(et.webhook_url);
    assert.equal(d?.status, 'failed');
    assert.equal(d?.attempts, 1);
    assert.equal(d?.next_attempt_at, null);
    assert.deepEqual(d?.attempt_log.map((a) => [a.outcome, a.status_code]), [['failed', 410]]);
    const shown = body<EventType>(await t.app.inject({ method: 'GET', url: `/v1/event-types/${et.id}`, headers: hostKey }));
    assert.equal(shown.webhook_url, null);

    t.clock.advance(2 * 24 * 60 * MINUTE);
    assert.equal(await processDue(t.ctx, senders), 0);
    assert.equal(receiver.requests.length, 1, 'no retry');
    syncClock(0);
    const before = (await listDeliveries(t.app, hostKey)).filter((x) => x.kind === 'webhook').length;
    await book(et);
    assert.equal((await listDeliveries(t.app, hostKey)).filter((x) => x.kind === 'webhook').length, before, 'new bookings queue no webhook');
  });

  test('a receiver that never answers is cut after WEBHOOK_TIMEOUT_MS and retried', async () => {
    const et = await hooked();
    receiver.respond = () => 'hang';
    await book(et);
    const started = Date.now();
    await processDue(t.ctx, senders);
    const took = Date.now() - started;
    // Not before the timeout (a timer cannot fire early); that it was the timeout which ended it is the error below
    // (the receiver never answers, so without the cut the attempt would not end at all).
    assert.ok(took >= TIMEOUT_MS - 20, `cut after ${TIMEOUT_MS} ms, not before (took ${took} ms)`);
    let [d] = await webhookDeliveries(et.webhook_url);
    assert.equal(d?.status, 'pending');
    assert.equal(d?.last_error, `timed out after ${TIMEOUT_MS} ms`);
    assert.deepEqual(d?.attempt_log.map((a) => [a.outcome, a.status_code, a.error]), [['failed', null, `timed out after ${TIMEOUT_MS} ms`]]);

    receiver.respond = () => ({ status: 200 });
    t.clock.advance(6_000);
    assert.equal(await processDue(t.ctx, senders), 1);
    [d] = await webhookDeliveries(et.webhook_url);
    assert.equal(d?.status, 'sent');
    assert.equal(receiver.requests.length, 2);
    assert.equal(receiver.requests[0]!.headers['webhook-id'], receiver.requests[1]!.headers['webhook-id']);
  });

  test('the timeout bounds the whole attempt: a receiver trickling its answer is cut too', async () => {
    const et = await hooked();
    const timers: NodeJS.Timeout[] = [];
    receiver.respond = () => (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const tick = setInterval(() => res.write('.'), 50);
      // Ends its answer well after the timeout (4x), so only the timeout can end the attempt first.
      timers.push(tick, setTimeout(() => (clearInterval(tick), res.end()), 4 * TIMEOUT_MS));
    };
    try {
      await book(et);
      await processDue(t.ctx, senders);
      const [d] = await webhookDeliveries(et.webhook_url);
      // The receiver answers 200 and ends its body after 3 s: only a timeout over the whole attempt (not just
      // until the headers) leaves the delivery pending with a timeout instead of sent.
      assert.equal(d?.last_error, `timed out after ${TIMEOUT_MS} ms`, `outcome ${d?.attempt_log[0]?.outcome}`);
      assert.equal(d?.status, 'pending');
    } finally {
      for (const x of timers) clearTimeout(x);
    }
  });

  test('a connection refused is retried, and an event type without webhook queues none', async () => {
    const gone = await startReceiver();
    const url = `${gone.origin}/closed`;
    await gone.close();
    const et = await hooked({}, url);
    await book(et);
    await processDue(t.ctx, senders);
    const [d] = await webhookDeliveries(url);
    assert.equal(d?.status, 'pending');
    // Not the socket's own error, address or port (issue #31, F11): the detail is in the server log.
    assert.equal(d?.last_error, 'the webhook receiver could not be reached');
    assert.deepEqual(d?.attempt_log.map((a) => a.error), ['the webhook receiver could not be reached']);

    const plain = await createEventType(t.app, hostKey, { name: 'Plain', slug: 'plain' });
    const before = (await listDeliveries(t.app, hostKey)).filter((x) => x.kind === 'webhook').length;
    await book(plain);
    assert.equal((await listDeliveries(t.app, hostKey)).filter((x) => x.kind === 'webhook').length, before);
  });
});
