import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { iso } from '../../lib/clock.js';
import { buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, setPlan, dropConfirmationEmails, signUp, type TestUser } from '../../../test/factories.js';
import { bookPublic, createEventType, listDeliveries, startReceiver, startSmtp, until, type Receiver, type SmtpPeer } from '../../../test/peers.js';
import { claimDue } from './outbox.repository.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, processDue, startOutboxWorker, type Senders } from './worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';
import { forgetPhoneCodes } from '../../../test/phone-codes.js';

const TIMEOUT_MS = 1_000;
const LEASE_MS = 2 * TIMEOUT_MS + 30_000;

async function drain(t: TestApp, senders: Senders): Promise<number> {
  let n = 0;
  for (let got = await processDue(t.ctx, senders); got > 0; got = await processDue(t.ctx, senders)) n += got;
  return n;
}

describe('peers down: the API answers at once and everything is delivered once when they come back', () => {
  let smtpPort: number;
  let smtp: SmtpPeer | undefined;
  let receiver: Receiver;
  let t: TestApp;
  let host: TestUser;
  /** Requests the receiver answered (a delivery), per path and webhook-id or delivery id. */
  const answered: string[] = [];

  before(async () => {
    const probe = await startSmtp();
    smtpPort = probe.port;
    await probe.close(); // the SMTP server is down
    receiver = await startReceiver();
    receiver.respond = () => 'hang'; // the webhook receiver and the phone hook never answer
    t = await buildTestApp({
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      MAIL_FROM: 'Muster <m@example.com>',
      MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1',
      MUSTER_PHONE_WEBHOOK_URL: `${receiver.origin}/sms`,
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      OUTBOX_POLL_MS: '20',
    });
    const root = await signUp(t.app, { name: 'Root' });
    host = await signUp(t.app, { name: 'Hanna Host' });
    await setPlan(t.app, root.cookie, host.id, 'agency');
    await dropConfirmationEmails(t.app);
    await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: host.cookie }, payload: { phone: '+14155550111' } });
    await forgetPhoneCodes(t.ctx); // the phone proof's code SMS (paging) is not what these tests count
    await createEventType(t.app, { cookie: host.cookie }, { name: 'Consult', slug: 'consult', webhook_url: `${receiver.origin}/hook` });
  });
  after(async () => {
    await t.close();
    await receiver.close();
    await smtp?.close();
  });

  test('booking and incident creation answer 201 without waiting for the deliveries', async () => {
    // The requests are answered before the worker runs: had either tried a delivery itself, the hung receiver would
    // hold it (or have seen it) and the rows would show an attempt. Order, not a clock, shows they only queued them.
    await bookPublic(t.app, t.clock, host.slug, 'consult');
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: host.cookie }, payload: { title: 'Lift stuck' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(receiver.requests.length, 0, 'no delivery was attempted by the requests themselves');
    const queued = await t.ctx.db.selectFrom('outbox').select(['kind', 'status', 'attempts']).orderBy('id').execute();
    assert.ok(queued.length >= 4 && queued.every((r) => r.attempts === 0 && (r.status === 'pending' || r.status === 'skipped')), JSON.stringify(queued));
    const stop = startOutboxWorker(t.ctx, createSenders(t.ctx));
    try {
      // The worker did try: the hung receiver got the webhook and the phone alert, the SMTP connection was refused.
      await until(async () => {
        const rows = await t.ctx.db.selectFrom('outbox').select(['status', 'attempts']).execute();
        return rows.every((r) => r.status !== 'sending' && (r.status !== 'pending' || r.attempts >= 1));
      }, 'every delivery tried once');
    } finally {
      await stop();
    }
    assert.deepEqual(receiver.requests.map((r) => r.path).sort(), ['/hook', '/sms']);
    const rows = await t.ctx.db.selectFrom('outbox').select(['kind', 'status', 'last_error']).orderBy('id').execute();
    for (const r of rows.filter((x) => x.kind === 'email')) assert.match(r.last_error ?? '', /ECONNREFUSED/);
    for (const r of rows.filter((x) => x.kind === 'webhook' || x.kind === 'phone')) assert.equal(r.last_error, `timed out after ${TIMEOUT_MS} ms`);
    assert.deepEqual(rows.map((r) => [r.kind, r.status]).sort(), [
      ['email', 'pending'],
      ['email', 'pending'],
      ['phone', 'pending'],
      ['push', 'skipped'],
      ['webhook', 'pending'],
    ]);
  });

  test('when the peers come back, the retries deliver each queued delivery exactly once', async () => {
    smtp = await startSmtp(smtpPort);
    receiver.respond = (r) => {
      answered.push(`${r.path} ${String(r.headers['webhook-id'] ?? (JSON.parse(r.text) as { delivery_id: number }).delivery_id)}`);
      return { status: 200 };
    };
    const senders = createSenders(t.ctx);
    assert.equal(await drain(t, senders), 0, 'not before the retry delay');
    t.clock.advance(6_000);
    assert.equal(await drain(t, senders), 4);
    for (const step of [6 * 60_000, 31 * 60_000, 3 * 3_600_000, 2 * 86_400_000]) {
      t.clock.advance(step);
      assert.equal(await drain(t, senders), 0);
    }
    assert.equal(smtp.messages.length, 2, 'the two booking emails, once each');
    assert.equal(new Set(smtp.messages.map((m) => m.header('message-id'))).size, 2);
    assert.equal(answered.length, 2);
    assert.equal(new Set(answered).size, 2, 'no duplicates');
    const rows = await t.ctx.db.selectFrom('outbox').select(['kind', 'status', 'attempts']).execute();
    assert.deepEqual(rows.filter((r) => r.kind !== 'push').map((r) => [r.kind, r.status, r.attempts]).sort(), [
      ['email', 'sent', 2],
      ['email', 'sent', 2],
      ['phone', 'sent', 2],
      ['webhook', 'sent', 2],
    ]);
  });
});

describe('a worker that dies mid-send', () => {
  let smtp: SmtpPeer;
  let receiver: Receiver;
  let t: TestApp;
  let host: TestUser;
  let hostKey: Headers;

  before(async () => {
    smtp = await startSmtp();
    receiver = await startReceiver();
    t = await buildTestApp({ SMTP_URL: smtp.url, MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
    const root = await signUp(t.app, { name: 'Root' });
    host = await signUp(t.app, { name: 'Hanna Host' });
    await setPlan(t.app, root.cookie, host.id, 'agency');
    await dropConfirmationEmails(t.app);
    hostKey = { 'x-api-key': (await createKey(t.app, host.cookie, 'live')).key };
    await createEventType(t.app, hostKey, { name: 'Consult', slug: 'consult', webhook_url: `${receiver.origin}/hook` });
  });
  after(async () => {
    await t.close();
    await receiver.close();
    await smtp.close();
  });
  beforeEach(async () => {
    // Each test starts with nothing due and empty peers.
    t.clock.advance(7 * 86_400_000);
    await drain(t, createSenders(t.ctx));
    receiver.requests.length = 0;
    smtp.messages.length = 0;
    receiver.respond = () => ({ status: 200 });
  });

  const claim = () => {
    const now = t.clock.now();
    return claimDue(t.ctx.db, t.ctx.database.dialect, iso(now), iso(new Date(now.getTime() + LEASE_MS)), 50);
  };

  test('rows claimed by a dead worker wait for the lease, then are delivered once each', async () => {
    for (let i = 0; i < 3; i += 1) await bookPublic(t.app, t.clock, host.slug, 'consult');
    const claimed = await claim();
    assert.equal(claimed.length, 9, 'three webhooks and six emails');
    assert.ok(claimed.every((r) => r.status === 'sending' && r.attempts === 1));

    const senders = createSenders(t.ctx);
    assert.equal(await processDue(t.ctx, senders), 0, 'leased: another worker leaves them alone');
    t.clock.advance(LEASE_MS - 1_000);
    assert.equal(await processDue(t.ctx, senders), 0, 'still leased');
    assert.equal(receiver.requests.length + smtp.messages.length, 0, 'nothing delivered during the lease');
    t.clock.advance(2_000);
    assert.equal(await processDue(t.ctx, senders), 9);
    t.clock.advance(3 * 86_400_000);
    assert.equal(await drain(t, senders), 0);

    // Ids are fixed when a delivery is queued (globally unique, issue 32): read them from the rows.
    const idOf = (r: (typeof claimed)[number], key: 'webhook_id' | 'message_id') => (r.payload as Record<string, string>)[key]!;
    const hookIds = claimed.filter((r) => r.kind === 'webhook').map((r) => idOf(r, 'webhook_id')).sort();
    assert.deepEqual(receiver.requests.map((r) => String(r.headers['webhook-id'])).sort(), hookIds, 'each webhook once, with its own id');
    const mailIds = claimed.filter((r) => r.kind === 'email').map((r) => idOf(r, 'message_id')).sort();
    assert.deepEqual(smtp.messages.map((m) => m.header('message-id')).sort(), mailIds, 'each email once');
    const rows = await t.ctx.db.selectFrom('outbox').select(['status', 'attempts']).where('id', 'in', claimed.map((r) => r.id)).execute();
    assert.ok(rows.every((r) => r.status === 'sent' && r.attempts === 2), 'the dead attempt counts');
  });

  test('a send that reached the peer before the worker died is repeated with the same webhook-id and Message-ID', async () => {
    await bookPublic(t.app, t.clock, host.slug, 'consult');
    const claimed = await claim();
    const senders = createSenders(t.ctx);
    // The dying worker got as far as sending, not as far as recording it.
    for (const row of claimed) await senders[row.kind](row);
    assert.equal(receiver.requests.length, 1);
    assert.equal(smtp.messages.length, 2);

    t.clock.advance(LEASE_MS + 1_000);
    assert.equal(await processDue(t.ctx, senders), 3);
    assert.equal(receiver.requests.length, 2);
    const [a, b] = receiver.requests as [(typeof receiver.requests)[0], (typeof receiver.requests)[0]];
    assert.equal(a.headers['webhook-id'], b.headers['webhook-id'], 'a receiver deduplicating on webhook-id sees one event');
    assert.equal(a.text, b.text);
    assert.equal(new Set(smtp.messages.map((m) => m.header('message-id'))).size, 2, 'the repeated emails carry the same Message-ID');
    t.clock.advance(3 * 86_400_000);
    assert.equal(await drain(t, senders), 0);
  });

  test('two workers running at once deliver each row once', async () => {
    for (let i = 0; i < 3; i += 1) await bookPublic(t.app, t.clock, host.slug, 'consult');
    const [x, y] = await Promise.all([processDue(t.ctx, createSenders(t.ctx)), processDue(t.ctx, createSenders(t.ctx))]);
    assert.equal(x + y, 9);
    assert.equal(receiver.requests.length, 3);
    assert.equal(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 3);
    assert.equal(smtp.messages.length, 6);
    assert.equal(new Set(smtp.messages.map((m) => m.header('message-id'))).size, 6);
  });

  test(`a delivery that keeps failing is tried ${MAX_ATTEMPTS} times on the Standard Webhooks schedule, then failed`, async () => {
    receiver.respond = () => ({ status: 503 });
    await bookPublic(t.app, t.clock, host.slug, 'consult');
    const senders = createSenders(t.ctx);
    await processDue(t.ctx, senders);
    const gaps: number[] = [];
    for (;;) {
      const hook = (await listDeliveries(t.app, hostKey)).find((x) => x.kind === 'webhook')!;
      if (hook.status !== 'pending') break;
      const wait = Date.parse(hook.next_attempt_at!) - t.clock.now().getTime();
      gaps.push(wait);
      t.clock.advance(wait);
      assert.equal(await processDue(t.ctx, senders), 1);
    }
    const [hook] = (await listDeliveries(t.app, hostKey)).filter((x) => x.kind === 'webhook');
    assert.equal(hook?.status, 'failed');
    assert.equal(hook?.attempts, MAX_ATTEMPTS);
    assert.equal(hook?.attempt_log.length, MAX_ATTEMPTS);
    assert.equal(receiver.requests.length, MAX_ATTEMPTS);
    assert.equal(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 1);
    assert.equal(gaps.length, RETRY_DELAYS_MS.length);
    gaps.forEach((gap, i) => {
      const nominal = RETRY_DELAYS_MS[i]!;
      assert.ok(gap >= nominal * 0.9 - 1 && gap <= nominal * 1.1 + 1, `retry ${i + 1} after ${nominal} ms ±10% (got ${gap})`);
    });
    assert.deepEqual(RETRY_DELAYS_MS, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000]);
  });
});
