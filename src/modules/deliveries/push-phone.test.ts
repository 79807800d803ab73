import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, beforeEach, describe, test } from 'node:test';
import { DAY } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';
import { browserKeys, decryptPush, listDeliveries, selfSignedCert, startReceiver, verifyVapid, type BrowserKeys, type Receiver } from '../../../test/peers.js';
import { processDue, type Senders } from './worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';
import { forgetPhoneCodes } from '../../../test/phone-codes.js';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'twilio-auth-token';
const FROM = '+15005550006';

interface PushNote {
  title: string;
  body: string;
  url?: string;
  incident_id?: number;
  signal_id?: number;
  org_id?: number;
}

describe('Web Push to a local HTTPS push service, phone alerts through a local Twilio', () => {
  let t: TestApp;
  let senders: Senders;
  let pushService: Receiver;
  let twilio: Receiver;
  let publicKey: string;
  let owner: TestUser;
  let member: TestUser;
  let ownerKey: Headers;
  const browsers = new Map<string, BrowserKeys>();

  before(async () => {
    const tls = selfSignedCert();
    pushService = await startReceiver({ tls });
    pushService.respond = () => ({ status: 201 });
    twilio = await startReceiver();
    twilio.respond = () => ({ status: 201, headers: { 'content-type': 'application/json' }, body: '{"sid":"SM1","status":"queued"}' });
    t = await buildTestApp({
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      TWILIO_FROM: FROM,
      TWILIO_API_URL: twilio.origin,
      PHONE_DAILY_CAP: '2',
      VAPID_SUBJECT: 'mailto:ops@muster.test',
      // The push service stands in on 127.0.0.1, a private address.
      MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1',
    });
    // The push service's certificate is self-signed: trust it (and only it) for these requests.
    senders = createSenders(t.ctx, new https.Agent({ ca: tls.cert }));
    owner = await signUp(t.app, { name: 'Olga Owner' });
    member = await signUp(t.app, { name: 'Max Member' });
    ownerKey = { 'x-api-key': (await createKey(t.app, owner.cookie, 'live')).key };
    const added = await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: ownerKey, payload: { email: member.email } });
    assert.equal(added.statusCode, 201, added.body);
    const res = await t.app.inject({ method: 'GET', url: '/v1/push/public-key' });
    assert.equal(res.statusCode, 200);
    publicKey = body<{ public_key: string }>(res).public_key;
    assert.equal(Buffer.from(publicKey, 'base64url').length, 65, 'an uncompressed P-256 point');
  });
  after(async () => {
    await t.close();
    await pushService.close();
    await twilio.close();
  });
  beforeEach(() => {
    pushService.requests.length = 0;
    twilio.requests.length = 0;
  });

  /** Registers a browser (real keys) for a user at https://127.0.0.1:<port>/push/<name>. */
  async function subscribe(headers: Headers, name: string): Promise<string> {
    const keys = browserKeys();
    const endpoint = `${pushService.origin}/push/${name}`;
    browsers.set(`/push/${name}`, keys);
    const res = await t.app.inject({ method: 'POST', url: '/v1/push/subscriptions', headers, payload: { endpoint, keys: keys.json } });
    assert.equal(res.statusCode, 201, res.body);
    return endpoint;
  }
  /** Checks one request to the push service the way a push service would, and decrypts it. */
  function opened(path: string): PushNote {
    const r = pushService.requests.find((x) => x.path === path);
    assert.ok(r, `a push to ${path}`);
    assert.equal(r.method, 'POST');
    assert.equal(r.headers['content-encoding'], 'aes128gcm');
    assert.equal(r.headers['ttl'], '300');
    assert.equal(r.headers['urgency'], 'high');
    assert.equal(r.headers['content-type'], 'application/octet-stream');
    const claims = verifyVapid(r.headers.authorization, publicKey);
    assert.equal(claims.aud, pushService.origin);
    assert.equal(claims.sub, 'mailto:ops@muster.test');
    assert.ok(claims.exp * 1000 > Date.now() && claims.exp * 1000 <= Date.now() + DAY, 'expires within 24 h');
    assert.ok(r.body.length > 86, 'a binary, encrypted body');
    assert.ok(!r.text.includes('incident'), 'the payload is not readable in transit');
    return JSON.parse(decryptPush(r.body, browsers.get(path)!)) as PushNote;
  }
  const newIncident = async (headers: Headers, title: string) => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers, payload: { title } });
    assert.equal(res.statusCode, 201, res.body);
    return body<{ Id: number }>(res);
  };

  test("a new incident is pushed, encrypted and VAPID-signed, to each of the creator's browsers only", async () => {
    await subscribe(ownerKey, 'olga-laptop');
    await subscribe(ownerKey, 'olga-phone');
    await subscribe({ cookie: member.cookie }, 'max-laptop');
    const incident = await newIncident(ownerKey, 'Water on the floor');
    await processDue(t.ctx, senders);

    assert.deepEqual(pushService.requests.map((r) => r.path).sort(), ['/push/olga-laptop', '/push/olga-phone']);
    // One push service: one VAPID token for both pushes (signed once, senders/push.ts vapidAuthorization).
    assert.equal(new Set(pushService.requests.map((r) => r.headers.authorization)).size, 1);
    for (const path of ['/push/olga-laptop', '/push/olga-phone']) {
      assert.deepEqual(opened(path), {
        title: 'New normal incident',
        body: 'Water on the floor',
        url: `http://muster.test/app/incidents/${incident.Id}`,
        incident_id: incident.Id,
      });
    }
    const d = (await listDeliveries(t.app, ownerKey)).find((x) => x.kind === 'push' && x.topic === 'incident.created')!;
    assert.equal(d.status, 'sent');
    assert.equal(d.recipient, `user:${owner.id}`);
  });

  test('an alert is pushed to every member of the org', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/signals', headers: ownerKey, payload: { type: 'alert', note: 'Man down at gate 3' } });
    assert.equal(res.statusCode, 201, res.body);
    // The alert opened an incident (docs/dispatch.md): the push links to it.
    const signal = body<{ Id: number; org_id: number; ticket_id: number }>(res);
    await processDue(t.ctx, senders);
    assert.deepEqual(pushService.requests.map((r) => r.path).sort(), ['/push/max-laptop', '/push/olga-laptop', '/push/olga-phone']);
    for (const path of ['/push/max-laptop', '/push/olga-laptop', '/push/olga-phone']) {
      assert.deepEqual(opened(path), { title: 'Alert from Olga Owner', body: 'Man down at gate 3', signal_id: signal.Id, org_id: signal.org_id, incident_id: signal.ticket_id });
    }
    const memberDeliveries = await listDeliveries(t.app, { cookie: member.cookie });
    assert.deepEqual(memberDeliveries.filter((d) => d.topic === 'signal.alert').map((d) => [d.kind, d.status]), [['push', 'sent']]);
  });

  test('a 410 from the push service deletes the subscription', async () => {
    const gone = await signUp(t.app, { name: 'Gina Gone' });
    const goneKey = { 'x-api-key': (await createKey(t.app, gone.cookie, 'live')).key };
    const endpoint = await subscribe(goneKey, 'gina-old');
    pushService.respond = (r) => (r.path === '/push/gina-old' ? { status: 410, body: 'push subscription has unsubscribed or expired' } : { status: 201 });
    try {
      await newIncident(goneKey, 'First');
      await processDue(t.ctx, senders);
      assert.equal(pushService.requests.length, 1);
      const rows = await t.ctx.db.selectFrom('push_subscriptions').select('id').where('endpoint', '=', endpoint).execute();
      assert.equal(rows.length, 0, 'the subscription is deleted');
      const [first] = (await listDeliveries(t.app, goneKey)).filter((d) => d.kind === 'push');
      assert.equal(first?.status, 'skipped');
      assert.equal(first?.last_error, 'every subscription had expired');

      await newIncident(goneKey, 'Second');
      await processDue(t.ctx, senders);
      assert.equal(pushService.requests.length, 1, 'nothing more is sent to it');
      const [second] = (await listDeliveries(t.app, goneKey)).filter((d) => d.kind === 'push');
      assert.equal(second?.status, 'skipped');
      assert.equal(second?.last_error, 'no push subscription');
    } finally {
      pushService.respond = () => ({ status: 201 });
    }
  });

  test('a push service error is retried', async () => {
    const user = await signUp(t.app, { name: 'Rita Retry' });
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    await subscribe(key, 'rita');
    pushService.respond = () => ({ status: 503 });
    try {
      await newIncident(key, 'Flaky');
      await processDue(t.ctx, senders);
      let [d] = (await listDeliveries(t.app, key)).filter((x) => x.kind === 'push');
      assert.equal(d?.status, 'pending');
      pushService.respond = () => ({ status: 201 });
      t.clock.advance(6_000);
      await processDue(t.ctx, senders);
      [d] = (await listDeliveries(t.app, key)).filter((x) => x.kind === 'push');
      assert.equal(d?.status, 'sent');
      assert.equal(pushService.requests.length, 2);
    } finally {
      pushService.respond = () => ({ status: 201 });
    }
  });

  test("a new incident texts the creator's phone through Twilio (basic auth, To/From/Body)", async () => {
    const user = await signUp(t.app, { name: 'Paul Phone' });
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    const me = await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: key, payload: { phone: '+14155550123' } });
    await forgetPhoneCodes(t.ctx); // the phone proof's code SMS (paging) is not what these tests count
    assert.equal(me.statusCode, 200, me.body);
    await newIncident(key, 'Smoke in hall B');
    await processDue(t.ctx, senders);

    assert.equal(twilio.requests.length, 1);
    const r = twilio.requests[0]!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, `/2010-04-01/Accounts/${SID}/Messages.json`);
    assert.equal(r.headers.authorization, `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
    assert.match(String(r.headers['content-type']), /^application\/x-www-form-urlencoded/);
    const form = new URLSearchParams(r.text);
    assert.equal(form.get('To'), '+14155550123');
    assert.equal(form.get('From'), FROM);
    assert.equal(form.get('Body'), 'New normal incident: Smoke in hall B');
    const [d] = (await listDeliveries(t.app, key)).filter((x) => x.kind === 'phone');
    assert.equal(d?.status, 'sent');
    assert.equal(d?.recipient, '+14155550123');
    assert.equal(d?.attempt_log[0]?.status_code, 201);
  });

  test('a creator without a phone: the alert is recorded as skipped, nothing is sent', async () => {
    const user = await signUp(t.app, { name: 'Nina Nophone' });
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    await newIncident(key, 'Quiet');
    await processDue(t.ctx, senders);
    assert.equal(twilio.requests.length, 0);
    const [d] = (await listDeliveries(t.app, key)).filter((x) => x.kind === 'phone');
    assert.equal(d?.status, 'skipped');
    assert.equal(d?.attempts, 0);
  });

  test('PHONE_DAILY_CAP=2: the third alert of the day is skipped (one at a time)', async () => {
    const user = await signUp(t.app, { name: 'Carl Cap' });
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: key, payload: { phone: '+14155550199' } });
    await forgetPhoneCodes(t.ctx); // the phone proof's code SMS (paging) is not what these tests count
    for (const title of ['One', 'Two', 'Three']) {
      await newIncident(key, title);
      await processDue(t.ctx, senders);
    }
    assert.deepEqual(twilio.requests.map((r) => new URLSearchParams(r.text).get('Body')), ['New normal incident: One', 'New normal incident: Two']);
    const phone = (await listDeliveries(t.app, key)).filter((x) => x.kind === 'phone').reverse();
    assert.deepEqual(phone.map((d) => [d.status, d.last_error]), [['sent', null], ['sent', null], ['skipped', 'daily cap of 2 reached']]);

    t.clock.advance(DAY + 1);
    await newIncident(key, 'Next day');
    await processDue(t.ctx, senders);
    assert.equal(twilio.requests.length, 3, 'a day later alerts go out again');
  });

  test('PHONE_DAILY_CAP=2: the third alert of the day is skipped (three queued together)', async () => {
    const user = await signUp(t.app, { name: 'Bea Burst' });
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: key, payload: { phone: '+14155550177' } });
    await forgetPhoneCodes(t.ctx); // the phone proof's code SMS (paging) is not what these tests count
    for (const title of ['One', 'Two', 'Three']) await newIncident(key, title);
    await processDue(t.ctx, senders);
    const phone = (await listDeliveries(t.app, key)).filter((x) => x.kind === 'phone');
    assert.deepEqual(
      phone.map((d) => d.status).sort(),
      ['sent', 'sent', 'skipped'],
      `at most 2 texts a day (Twilio got ${twilio.requests.length}: ${phone.map((d) => d.status).join(', ')})`,
    );
    assert.equal(twilio.requests.length, 2);
  });
});

describe('phone alerts through MUSTER_PHONE_WEBHOOK_URL', () => {
  let t: TestApp;
  let hook: Receiver;
  before(async () => {
    hook = await startReceiver();
    t = await buildTestApp({ MUSTER_PHONE_WEBHOOK_URL: `${hook.origin}/sms` });
  });
  after(async () => {
    await t.close();
    await hook.close();
  });

  test('a JSON POST arrives with the number and the text', async () => {
    const user = await signUp(t.app, { name: 'Hugo Hook' });
    await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: user.cookie }, payload: { phone: '+447700900123' } });
    await forgetPhoneCodes(t.ctx); // the phone proof's code SMS (paging) is not what these tests count
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: user.cookie }, payload: { title: 'Gate stuck', priority: 'high' } });
    assert.equal(res.statusCode, 201);
    await processDue(t.ctx, createSenders(t.ctx));
    assert.equal(hook.requests.length, 1);
    const r = hook.requests[0]!;
    assert.equal(r.path, '/sms');
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const sent = JSON.parse(r.text) as { to: string; text: string; topic: string; delivery_id: number };
    const [d] = (await listDeliveries(t.app, { cookie: user.cookie })).filter((x) => x.kind === 'phone');
    assert.deepEqual(sent, { to: '+447700900123', text: 'New high incident: Gate stuck', topic: 'incident.created', delivery_id: d!.id });
    assert.equal(d?.status, 'sent');
  });
});

describe('phone alerts with no provider configured', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('are recorded as skipped', async () => {
    const user = await signUp(t.app, { name: 'Nils Noprovider' });
    await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: user.cookie }, payload: { phone: '+14155550100' } });
    await forgetPhoneCodes(t.ctx); // the phone proof's code SMS (paging) is not what these tests count
    await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: user.cookie }, payload: { title: 'Nobody hears' } });
    await processDue(t.ctx, createSenders(t.ctx));
    const [d] = (await listDeliveries(t.app, { cookie: user.cookie })).filter((x) => x.kind === 'phone');
    assert.equal(d?.status, 'skipped');
    assert.equal(d?.last_error, 'no phone provider configured');
    assert.equal(d?.recipient, '+14155550100');
  });
});
