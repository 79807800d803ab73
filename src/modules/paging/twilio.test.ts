import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY, MINUTE } from '../../lib/clock.js';
import { dispatchWorld, type DispatchWorld, type IncidentView, type TimelineView } from '../../../test/world.js';
import { listen } from '../../../test/sse-client.js';
import { gatherOf, startTwilioStandIn, twilioSignature, type PlacedCall, type TwilioStandIn } from '../../../test/twilio-standin.js';
import type { TestUser } from '../../../test/factories.js';
import { processDue, type Senders } from '../deliveries/worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';
import { pagePerson, sendDueNotifications } from './index.js';
import { validTwilioSignature } from './twilio-signature.js';

const PUBLIC = 'http://muster.test';

describe('Twilio X-Twilio-Signature', () => {
  test("Twilio's documented example: the stand-in signs and the verifier accepts exactly that", () => {
    // The example of Twilio's "Secure webhooks" page: auth token 12345, a URL with a query, a Gather's parameters.
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    const params = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
    assert.equal(twilioSignature('12345', url, params), '0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
    assert.equal(validTwilioSignature('12345', '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', url, params), true);
    assert.equal(validTwilioSignature('12345', '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', url, { ...params, Digits: '1235' }), false, 'a changed parameter');
    assert.equal(validTwilioSignature('12345', '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', 'https://mycompany.com/myapp.php?foo=1&bar=3', params), false, 'a changed URL');
    assert.equal(validTwilioSignature('54321', '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', url, params), false, 'another auth token');
    assert.equal(validTwilioSignature('12345', undefined, url, params), false);
  });
});

describe('paging through Twilio (a local stand-in speaking its REST API and sending signed webhooks)', () => {
  let w: DispatchWorld;
  let twilio: TwilioStandIn;
  let senders: Senders;

  before(async () => {
    twilio = await startTwilioStandIn();
    w = await dispatchWorld({ ...twilio.env, PHONE_DAILY_CAP: '100' });
    twilio.route[PUBLIC] = `http://127.0.0.1:${await listen(w.t)}`;
    senders = createSenders(w.t.ctx);
  });
  after(async () => {
    await w.close();
    await twilio.close();
  });

  const db = () => w.t.ctx.db;
  /** Proves a person's number the way they would: the code arrives at the stand-in by Twilio's Messages API. */
  async function provePhone(u: TestUser, phone: string) {
    await w.ok(w.as(u), 'PATCH', '/v1/auth/me', { phone });
    await processDue(w.t.ctx, senders);
    const sms = twilio.messages.filter((m) => m.to === phone).pop();
    assert.ok(sms, 'the code SMS reached Twilio');
    await w.ok(w.as(u), 'POST', '/v1/auth/me/phone/verify', { code: /\b(\d{6})\b/.exec(sms.body)![1] }, 200);
  }
  async function page(u: TestUser, fields: object = {}): Promise<IncidentView> {
    const incident = await w.incident(w.as(w.owner), { title: 'water main burst', location_name: 'Mill Road', priority: 'urgent', ...fields });
    await w.t.ctx.transaction(async (tx) => {
      const row = await tx.db.selectFrom('incidents').selectAll().where('id', '=', incident.Id).executeTakeFirstOrThrow();
      await pagePerson(w.t.ctx, tx, row, u.id);
    });
    // Rules with no delay go out in the paging run the commit woke: wait for it.
    await w.t.ctx.escalation.idle();
    return incident;
  }
  const notifications = (incidentId: number) => db().selectFrom('paging_notifications').selectAll().where('incident_id', '=', incidentId).orderBy('id').execute();
  const callTo = (phone: string) => twilio.calls.filter((c) => c.to === phone).pop()!;
  const ackEvent = async (id: number): Promise<TimelineView | undefined> => (await w.timeline(w.as(w.owner), id)).find((e) => e.type === 'acknowledged');
  const setRules = (u: TestUser, high: object[], low: object[] = []) => w.ok(w.as(u), 'PUT', '/v1/auth/me/notification-rules', { high, low }, 200);

  test('the phone code reaches Twilio with Basic auth and a form body; wrong credentials are refused by the stand-in', async () => {
    const before = twilio.messages.length;
    await provePhone(w.ann, '+14155550101');
    assert.equal(twilio.messages.length, before + 1);
    assert.equal(twilio.messages.at(-1)!.from, twilio.from);
    const res = await fetch(`${twilio.origin}/2010-04-01/Accounts/${twilio.accountSid}/Messages.json`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${twilio.accountSid}:wrong`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'To=%2B1&From=%2B1&Body=x',
    });
    assert.equal(res.status, 401);
  });

  test('a call reads the incident and gathers one digit: another key repeats it, 4 acknowledges (via voice) and stops every pending notification', async () => {
    await provePhone(w.ben, '+14155550202');
    await setRules(w.ben, [{ channel: 'voice', delay_minutes: 0 }, { channel: 'sms', delay_minutes: 5 }]);
    const incident = await page(w.ben);
    assert.deepEqual((await notifications(incident.Id)).map((n) => [n.channel, n.status]), [['voice', 'sent'], ['sms', 'pending']], 'the call went at once; the SMS in 5 minutes');
    await processDue(w.t.ctx, senders);
    const call = callTo('+14155550202');
    assert.equal(call.from, twilio.from);
    assert.ok(call.url.startsWith(`${PUBLIC}/v1/providers/twilio/voice?token=`), call.url);
    assert.ok(call.statusCallback?.startsWith(`${PUBLIC}/v1/providers/twilio/voice?token=`));

    const answered = await twilio.answer(call);
    assert.equal(answered.status, 200);
    assert.match(answered.contentType, /^text\/xml/);
    assert.match(answered.body, new RegExp(`<Say>Urgent incident ${incident.Id}, water main burst, Mill Road\\. Press 4 to acknowledge, or 6 to resolve\\.</Say>`));
    const gather = gatherOf(answered.body)!;
    assert.equal(gather.numDigits, '1');
    assert.match(answered.body, /<\/Gather><Redirect method="POST">[^<]*round=2<\/Redirect>/, 'silence reads it again');
    assert.match((await twilio.post(`${call.url}&round=4`, { AccountSid: twilio.accountSid, CallSid: call.sid, CallStatus: 'in-progress', From: call.from, To: call.to })).body, /No key was pressed\. Goodbye\.<\/Say><Hangup\/>/, 'after three readings');
    const again = await twilio.press(call, gather.action, '9');
    assert.match(again.body, /Sorry, that key does nothing\. Urgent incident/);
    assert.equal((await ackEvent(incident.Id)), undefined, 'another key changes nothing');
    const done = await twilio.press(call, gatherOf(again.body)!.action, '4');
    assert.match(done.body, new RegExp(`<Say>Incident ${incident.Id} acknowledged: it is yours\\. Goodbye\\.</Say><Hangup/>`));
    const ack = await ackEvent(incident.Id);
    assert.equal(ack?.data.via, 'voice');
    assert.equal(ack?.actor?.user_id, w.ben.id);
    const rows = await notifications(incident.Id);
    assert.deepEqual(rows.map((n) => [n.channel, n.status, n.reason]), [['voice', 'sent', null], ['sms', 'cancelled', 'acknowledged']]);
    w.t.clock.advance(5 * MINUTE);
    await sendDueNotifications(w.t.ctx);
    assert.equal(twilio.messages.filter((m) => m.to === '+14155550202' && m.body.includes(`incident ${incident.Id}`)).length, 0, 'the cancelled SMS is never sent');

    // The status callback is recorded; a call nobody answered marks its notification failed.
    assert.equal((await twilio.callEnded(call, 'completed')).body.includes('<Response/>'), true);
    const second = await page(w.ben);
    await sendDueNotifications(w.t.ctx);
    await processDue(w.t.ctx, senders);
    const unanswered = callTo('+14155550202');
    assert.notEqual(unanswered.sid, call.sid);
    assert.equal((await twilio.callEnded(unanswered, 'no-answer')).status, 200);
    const events = await db().selectFrom('paging_call_events').select(['call_sid', 'status']).orderBy('id').execute();
    assert.deepEqual(events.slice(-2), [{ call_sid: call.sid, status: 'completed' }, { call_sid: unanswered.sid, status: 'no-answer' }]);
    const voice = (await notifications(second.Id)).find((n) => n.channel === 'voice')!;
    assert.deepEqual([voice.status, voice.reason], ['failed', 'call no-answer']);
    // 6 resolves.
    const resolved = await twilio.press(unanswered, `${unanswered.url}&round=2`, '6');
    assert.match(resolved.body, new RegExp(`Incident ${second.Id} resolved`));
    assert.equal((await w.ok<IncidentView>(w.as(w.owner), 'GET', `/v1/tickets/${second.Id}`)).status, 'resolved');
    assert.match((await twilio.answer(unanswered)).body, /already resolved/);
  });

  test('SMS replies: "4" acknowledges the latest open page and says which, "6 <n>" resolves the one named; an unknown number gets the empty TwiML', async () => {
    await provePhone(w.admin, '+14155550303');
    await setRules(w.admin, [{ channel: 'sms', delay_minutes: 0 }]);
    const first = await page(w.admin, { title: 'gas smell' });
    const second = await page(w.admin, { title: 'tree on the line', location_name: undefined });
    await sendDueNotifications(w.t.ctx);
    await processDue(w.t.ctx, senders);
    const texts = twilio.messages.filter((m) => m.to === '+14155550303').slice(-2);
    assert.match(texts[0]!.body, new RegExp(`^Urgent incident ${first.Id}, gas smell, Mill Road\\. Reply 4 to acknowledge, 6 to resolve`));
    assert.match(texts[1]!.body, new RegExp(`"4 ${second.Id}"`));
    const url = `${PUBLIC}/v1/providers/twilio/sms`;
    const latest = await twilio.inboundSms(url, { from: '+14155550303', body: '4' });
    assert.equal(latest.status, 200);
    assert.match(latest.body, new RegExp(`<Message>Incident ${second.Id} \\(tree on the line\\) acknowledged: it is yours\\. Other open pages: ${first.Id}`));
    assert.equal((await ackEvent(second.Id))?.data.via, 'sms');
    assert.equal(await ackEvent(first.Id), undefined);
    const named = await twilio.inboundSms(url, { from: '+14155550303', body: ` 6 ${first.Id} ` });
    assert.match(named.body, new RegExp(`Incident ${first.Id} \\(gas smell\\) resolved\\.</Message>`));
    assert.equal((await w.ok<IncidentView>(w.as(w.owner), 'GET', `/v1/tickets/${first.Id}`)).status, 'resolved');
    assert.match((await twilio.inboundSms(url, { from: '+14155550303', body: '6 999999' })).body, /no open page for incident 999999/);
    assert.match((await twilio.inboundSms(url, { from: '+14155550303', body: 'hello?' })).body, /Reply 4 to acknowledge or 6 to resolve/);
    const stranger = await twilio.inboundSms(url, { from: '+19995550000', body: '4' });
    assert.deepEqual([stranger.status, stranger.body], [200, '<?xml version="1.0" encoding="UTF-8"?><Response/>']);
  });

  test('a bad signature is 401; an unknown call is the empty TwiML, never an error', async () => {
    const sms = `${PUBLIC}/v1/providers/twilio/sms`;
    const params = { AccountSid: twilio.accountSid, From: '+14155550303', To: twilio.from, Body: '4', MessageSid: 'SM1' };
    assert.equal((await twilio.post(sms, params, 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=')).status, 401, 'forged');
    assert.equal((await twilio.post(sms, params, twilioSignature(twilio.authToken, sms, { ...params, Body: '6' }))).status, 401, 'a parameter changed after signing');
    assert.equal((await twilio.post(sms, params, twilioSignature('not-the-token', sms, params))).status, 401, 'signed with another token');
    const voice = `${PUBLIC}/v1/providers/twilio/voice?token=nope`;
    const callParams = { AccountSid: twilio.accountSid, CallSid: 'CA0', CallStatus: 'in-progress', From: twilio.from, To: '+1' };
    assert.equal((await twilio.post(voice, callParams, twilioSignature(twilio.authToken, `${PUBLIC}/v1/providers/twilio/voice?token=other`, callParams))).status, 401, 'signed for another URL');
    const unknown = await twilio.post(voice, callParams);
    assert.deepEqual([unknown.status, unknown.body], [200, '<?xml version="1.0" encoding="UTF-8"?><Response/>']);
    const fake: PlacedCall = { sid: 'CA9', to: '+1', from: twilio.from, url: `${PUBLIC}/v1/providers/twilio/voice`, method: 'POST', statusCallback: `${PUBLIC}/v1/providers/twilio/voice?event=status`, statusCallbackEvents: [] };
    assert.equal((await twilio.answer(fake)).status, 200);
    assert.equal((await twilio.callEnded(fake, 'failed')).status, 200);
  });
});

describe('acknowledge from the notification: signed action tokens', () => {
  let w: DispatchWorld;
  before(async () => {
    w = await dispatchWorld();
  });
  after(() => w.close());

  /** Pages a person (push and email at once) and sends them: answers the tokens of the push and the email. */
  async function paged(u: TestUser, fields: object = {}) {
    const incident = await w.incident(w.as(w.owner), { title: 'water main burst', location_name: 'Mill Road', priority: 'high', ...fields });
    await w.t.ctx.transaction(async (tx) => {
      const row = await tx.db.selectFrom('incidents').selectAll().where('id', '=', incident.Id).executeTakeFirstOrThrow();
      await pagePerson(w.t.ctx, tx, row, u.id);
    });
    // Rules with no delay go out in the paging run the commit woke: wait for it.
    await w.t.ctx.escalation.idle();
    await sendDueNotifications(w.t.ctx);
    const email = await w.t.ctx.db.selectFrom('outbox').select('payload').where('topic', '=', 'incident.paged').where('kind', '=', 'email').where('user_id', '=', u.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    const text = (JSON.parse(email.payload) as { text: string }).text;
    const link = /http:\/\/muster\.test\/actions\/(\S+)/.exec(text)![1]!;
    return { incident, emailToken: link };
  }
  const action = (token: string, act: string) => w.t.app.inject({ method: 'POST', url: `/v1/actions/${token}`, payload: { action: act } });
  const pageOf = (token: string) => w.t.app.inject({ method: 'GET', url: `/actions/${token}` });
  const incidentOf = (id: number) => w.ok<IncidentView>(w.as(w.owner), 'GET', `/v1/tickets/${id}`);

  test('the email link is a read-only page with two buttons; its button acknowledges as the person paged, via email', async () => {
    await w.ok(w.as(w.ann), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'push', delay_minutes: 0 }, { channel: 'email', delay_minutes: 0 }, { channel: 'sms', delay_minutes: 3 }], low: [] }, 200);
    const { incident, emailToken } = await paged(w.ann);
    // The push was skipped (no browser registered), with its reason; the SMS waits.
    const rows = await w.t.ctx.db.selectFrom('paging_notifications').select(['channel', 'status', 'reason']).where('incident_id', '=', incident.Id).orderBy('id').execute();
    assert.deepEqual(rows, [
      { channel: 'push', status: 'skipped', reason: 'no push subscription' },
      { channel: 'email', status: 'sent', reason: null },
      { channel: 'sms', status: 'pending', reason: null },
    ]);
    for (let i = 0; i < 3; i++) {
      const view = await pageOf(emailToken);
      assert.equal(view.statusCode, 200);
      assert.match(view.headers['content-type'] as string, /^text\/html/);
      assert.match(view.body, new RegExp(`High priority incident ${incident.Id}, water main burst, Mill Road`));
      assert.match(view.body, /value="acknowledge"/);
      assert.match(view.body, /value="resolve"/);
    }
    const unchanged = await incidentOf(incident.Id);
    assert.deepEqual([unchanged.acknowledged_at, unchanged.status], [null, 'open'], 'a GET (a mail scanner) changes nothing');
    const pressed = await w.t.app.inject({ method: 'POST', url: `/actions/${emailToken}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'action=acknowledge' });
    assert.equal(pressed.statusCode, 200, pressed.body);
    assert.match(pressed.body, /acknowledged: it is yours/);
    const after = await incidentOf(incident.Id);
    assert.deepEqual([after.acknowledged_by, after.status], [w.ann.id, 'in_progress']);
    const ack = (await w.timeline(w.as(w.owner), incident.Id)).find((e) => e.type === 'acknowledged')!;
    assert.deepEqual([ack.data.via, ack.actor?.user_id], ['email', w.ann.id]);
    const sms = await w.t.ctx.db.selectFrom('paging_notifications').select(['status', 'reason']).where('incident_id', '=', incident.Id).where('channel', '=', 'sms').executeTakeFirstOrThrow();
    assert.deepEqual(sms, { status: 'cancelled', reason: 'acknowledged' });
  });

  test('POST /v1/actions/:token acts as the person paged with the channel of the token; a resolved incident answers so; forged, altered or day-old tokens are 404', async () => {
    await w.ok(w.as(w.ben), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'email', delay_minutes: 0 }], low: [] }, 200);
    const { incident, emailToken } = await paged(w.ben);
    const res = await action(emailToken, 'acknowledge');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([res.json<{ outcome: string }>().outcome], ['acknowledged']);
    assert.equal((await action(emailToken, 'acknowledge')).json<{ outcome: string }>().outcome, 'already_acknowledged');
    assert.equal((await action(emailToken, 'resolve')).json<{ outcome: string }>().outcome, 'resolved');
    assert.equal((await incidentOf(incident.Id)).status, 'resolved');
    const statusEvent = (await w.timeline(w.as(w.owner), incident.Id)).filter((e) => e.type === 'status_changed').pop()!;
    assert.deepEqual([statusEvent.data.to, statusEvent.actor?.user_id], ['resolved', w.ben.id]);
    // Resolved: the page says so (not an error), the action answers so and changes nothing.
    const done = await pageOf(emailToken);
    assert.equal(done.statusCode, 200);
    assert.match(done.body, new RegExp(`Incident ${incident.Id} is already resolved`));
    assert.doesNotMatch(done.body, /<button/);
    assert.equal((await action(emailToken, 'acknowledge')).json<{ outcome: string }>().outcome, 'already_resolved');
    // Altered or forged.
    const altered = emailToken.replace(/^(\d+)\./, (_m, n: string) => `${Number(n) + 1}.`);
    const flipped = emailToken.slice(0, -1) + (emailToken.endsWith('A') ? 'B' : 'A');
    for (const bad of [altered, flipped, 'forged.token', `${emailToken}x`]) {
      assert.equal((await action(bad, 'acknowledge')).statusCode, 404, bad);
      assert.equal((await pageOf(bad)).statusCode, 404, bad);
    }
    assert.equal((await action(emailToken, 'snooze')).statusCode, 422);
    // A day later the token is useless.
    const fresh = await paged(w.ben);
    w.t.clock.advance(DAY + 1);
    assert.equal((await action(fresh.emailToken, 'acknowledge')).statusCode, 404);
    assert.equal((await pageOf(fresh.emailToken)).statusCode, 404);
    assert.equal((await incidentOf(fresh.incident.Id)).acknowledged_at, null);
  });

  test('the push carries the token for its Acknowledge and Resolve actions (via push)', async () => {
    await w.t.app.inject({ method: 'POST', url: '/v1/push/subscriptions', headers: w.as(w.admin), payload: { endpoint: 'https://push.example.com/send/abc', keys: { p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg' } } });
    await w.ok(w.as(w.admin), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'push', delay_minutes: 0 }], low: [] }, 200);
    const incident = await w.incident(w.as(w.owner), { title: 'flood', priority: 'urgent' });
    await w.t.ctx.transaction(async (tx) => pagePerson(w.t.ctx, tx, await tx.db.selectFrom('incidents').selectAll().where('id', '=', incident.Id).executeTakeFirstOrThrow(), w.admin.id));
    await sendDueNotifications(w.t.ctx);
    const push = await w.t.ctx.db.selectFrom('outbox').select('payload').where('topic', '=', 'incident.paged').where('kind', '=', 'push').where('user_id', '=', w.admin.id).executeTakeFirstOrThrow();
    const p = JSON.parse(push.payload) as { action_url: string; actions: { action: string }[]; incident_id: number };
    assert.deepEqual(p.actions.map((a) => a.action), ['acknowledge', 'resolve']);
    assert.equal(p.incident_id, incident.Id);
    const res = await w.t.app.inject({ method: 'POST', url: p.action_url.replace('http://muster.test', ''), payload: { action: 'acknowledge' } });
    assert.equal(res.json<{ outcome: string }>().outcome, 'acknowledged');
    assert.equal((await w.timeline(w.as(w.owner), incident.Id)).find((e) => e.type === 'acknowledged')?.data.via, 'push');
  });
});
