import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, dropConfirmationEmails, signUp, type TestUser } from '../../../test/factories.js';
import { bookAs, browserKeys, createEventType, listDeliveries, selfSignedCert, startReceiver, startSmtp, type Booking, type Receiver, type SmtpPeer } from '../../../test/peers.js';
import { processDue, type Senders } from './worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';
import { forgetPhoneCodes } from '../../../test/phone-codes.js';

/**
 * Test mode (an sk_test_ key): webhooks are delivered; emails, pushes and phone alerts are
 * recorded as suppressed and never reach the SMTP server, the push service or the phone provider.
 */
describe('test mode deliveries', () => {
  let smtp: SmtpPeer;
  let pushService: Receiver;
  let twilio: Receiver;
  let hooks: Receiver;
  let t: TestApp;
  let senders: Senders;
  let owner: TestUser;
  let member: TestUser;
  let testKey: Headers;
  let liveKey: Headers;

  before(async () => {
    const tls = selfSignedCert();
    smtp = await startSmtp();
    pushService = await startReceiver({ tls });
    pushService.respond = () => ({ status: 201 });
    twilio = await startReceiver();
    twilio.respond = () => ({ status: 201, body: '{}' });
    hooks = await startReceiver();
    t = await buildTestApp({
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Muster <m@example.com>',
      MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1',
      TWILIO_ACCOUNT_SID: 'AC1',
      TWILIO_AUTH_TOKEN: 'token',
      TWILIO_FROM: '+15005550006',
      TWILIO_API_URL: twilio.origin,
    });
    // Webhook receivers check the signature time against the real clock.
    t.clock.set(new Date());
    senders = createSenders(t.ctx, new https.Agent({ ca: tls.cert }));
    owner = await signUp(t.app, { name: 'Olga Owner' });
    member = await signUp(t.app, { name: 'Max Member' });
    await dropConfirmationEmails(t.app);
    testKey = { 'x-api-key': (await createKey(t.app, owner.cookie, 'test')).key };
    liveKey = { 'x-api-key': (await createKey(t.app, owner.cookie, 'live')).key };
    await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: liveKey, payload: { email: member.email } });
    await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: liveKey, payload: { phone: '+14155550123' } });
    await forgetPhoneCodes(t.ctx); // the phone proof's code SMS (paging) is not what these tests count
    for (const [headers, name] of [
      [liveKey, 'olga'],
      [{ cookie: member.cookie }, 'max'],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/push/subscriptions', headers, payload: { endpoint: `${pushService.origin}/push/${name}`, keys: browserKeys().json } });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => {
    await t.close();
    await Promise.all([smtp.close(), pushService.close(), twilio.close(), hooks.close()]);
  });

  const peersTouched = () => smtp.messages.length + pushService.requests.length + twilio.requests.length;

  test('a test booking: the webhook is delivered (signed, livemode false); both emails are suppressed', async () => {
    const et = await createEventType(t.app, testKey, { name: 'Sandbox', slug: 'sandbox', webhook_url: `${hooks.origin}/test-hooks` });
    assert.equal(et.livemode, false);
    const b = await bookAs(t.app, t.clock, testKey, et.id);
    assert.equal(b.livemode, false);
    await processDue(t.ctx, senders);

    assert.equal(hooks.requests.length, 1);
    const r = hooks.requests[0]!;
    const payload = new Webhook(et.webhook_secret!).verify(r.text, {
      'webhook-id': String(r.headers['webhook-id']),
      'webhook-timestamp': String(r.headers['webhook-timestamp']),
      'webhook-signature': String(r.headers['webhook-signature']),
    }) as { type: string; data: Booking };
    assert.equal(payload.type, 'booking.created');
    assert.equal(payload.data.id, b.id);
    assert.equal(payload.data.livemode, false);

    const listed = await listDeliveries(t.app, testKey);
    assert.deepEqual(listed.filter((d) => d.topic.startsWith('booking.created')).map((d) => [d.kind, d.status]).sort(), [
      ['email', 'suppressed'],
      ['email', 'suppressed'],
      ['webhook', 'sent'],
    ]);
    assert.ok(listed.filter((d) => d.status === 'suppressed').every((d) => d.attempts === 0 && d.attempt_log.length === 0), 'never attempted');
    assert.equal(peersTouched(), 0, 'no email left');
  });

  test('a test incident and a test alert: push and phone are suppressed, nothing reaches the push service or Twilio', async () => {
    const incident = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: testKey, payload: { title: 'Drill' } });
    assert.equal(incident.statusCode, 201, incident.body);
    assert.equal(body<{ livemode: boolean }>(incident).livemode, false);
    const alert = await t.app.inject({ method: 'POST', url: '/v1/signals', headers: testKey, payload: { type: 'alert', note: 'Drill alert' } });
    assert.equal(alert.statusCode, 201, alert.body);
    assert.equal(await processDue(t.ctx, senders), 0, 'nothing to send');
    assert.equal(peersTouched(), 0);

    const rows = await t.ctx.db.selectFrom('outbox').select(['kind', 'topic', 'status', 'livemode']).where('topic', 'in', ['incident.created', 'signal.alert']).execute();
    assert.deepEqual(rows.map((r) => [r.topic, r.kind, r.status, r.livemode]).sort(), [
      ['incident.created', 'phone', 'suppressed', 0],
      ['incident.created', 'push', 'suppressed', 0],
      ['signal.alert', 'push', 'suppressed', 0],
      ['signal.alert', 'push', 'suppressed', 0],
    ]);
    const mine = await listDeliveries(t.app, testKey);
    assert.deepEqual(mine.filter((d) => d.topic === 'incident.created').map((d) => [d.kind, d.status]).sort(), [
      ['phone', 'suppressed'],
      ['push', 'suppressed'],
    ]);
    assert.equal((await listDeliveries(t.app, liveKey)).length, 0, 'a live credential sees none of them');
  });

  test('the same actions in live mode do reach every peer (the peers above were listening)', async () => {
    const et = await createEventType(t.app, liveKey, { name: 'Real', slug: 'real', webhook_url: `${hooks.origin}/live-hooks` });
    await bookAs(t.app, t.clock, liveKey, (et).id);
    await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: liveKey, payload: { title: 'Real one' } });
    await t.app.inject({ method: 'POST', url: '/v1/signals', headers: liveKey, payload: { type: 'alert', note: 'Real alert' } });
    await processDue(t.ctx, senders);
    assert.equal(smtp.messages.length, 2);
    assert.equal(twilio.requests.length, 1);
    assert.deepEqual(pushService.requests.map((r) => r.path).sort(), ['/push/max', '/push/olga', '/push/olga']);
    assert.deepEqual(hooks.requests.map((r) => r.path), ['/test-hooks', '/live-hooks']);
  });
});
