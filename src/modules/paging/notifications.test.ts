import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { createContext, type AppContext } from '../../context.js';
import { MINUTE } from '../../lib/clock.js';
import { testDialect } from '../../../test/helpers.js';
import { dispatchWorld, type DispatchWorld, type IncidentView } from '../../../test/world.js';
import type { TestUser } from '../../../test/factories.js';
import { startTwilioStandIn, type TwilioStandIn } from '../../../test/twilio-standin.js';
import { pagePerson, sendDueNotifications } from './index.js';

describe("a page's notifications: each rule at page time + its delay, skipped with a reason, cancelled by acknowledge or resolve, once", () => {
  let w: DispatchWorld;
  let twilio: TwilioStandIn;

  before(async () => {
    // Twilio is configured (calls are possible); nothing here runs the outbox worker.
    twilio = await startTwilioStandIn();
    w = await dispatchWorld({ ...twilio.env, PHONE_DAILY_CAP: '100' });
  });
  after(async () => {
    await w.close();
    await twilio.close();
  });

  const db = () => w.t.ctx.db;
  async function provePhone(u: TestUser, phone: string) {
    await w.ok(w.as(u), 'PATCH', '/v1/auth/me', { phone }, 200);
    const row = await db().selectFrom('outbox').select('payload').where('topic', '=', 'auth.phone_code').where('user_id', '=', u.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    await w.ok(w.as(u), 'POST', '/v1/auth/me/phone/verify', { code: /\b(\d{6})\b/.exec((JSON.parse(row.payload) as { body: string }).body)![1] }, 200);
  }
  async function page(u: TestUser, fields: object = {}, headers = w.as(w.owner)): Promise<IncidentView> {
    const incident = await w.incident(headers, { title: 'water main burst', priority: 'urgent', ...fields });
    await w.t.ctx.transaction(async (tx) => pagePerson(w.t.ctx, tx, await tx.db.selectFrom('incidents').selectAll().where('id', '=', incident.Id).executeTakeFirstOrThrow(), u.id));
    // A rule with no delay is sent by the paging run the commit woke: wait for it.
    await w.t.ctx.escalation.idle();
    return incident;
  }
  const rows = (incidentId: number) =>
    db().selectFrom('paging_notifications').select(['channel', 'status', 'reason', 'due_at']).where('incident_id', '=', incidentId).orderBy('id').execute();
  const states = async (incidentId: number) => (await rows(incidentId)).map((r) => [r.channel, r.status, r.reason]);
  const paged = (userId: number) =>
    db().selectFrom('outbox').select(['kind', 'recipient', 'payload', 'status']).where('topic', '=', 'incident.paged').where('user_id', '=', userId).orderBy('id').execute();

  test('the default high-urgency rules: push and email at once, SMS at 2 minutes, the call at 5', async () => {
    await provePhone(w.ann, '+14155550111');
    const start = w.t.clock.now().getTime();
    const incident = await page(w.ann);
    assert.deepEqual(
      (await rows(incident.Id)).map((r) => [r.channel, Date.parse(r.due_at) - start]),
      [['push', 0], ['email', 0], ['sms', 2 * MINUTE], ['voice', 5 * MINUTE]],
    );
    await sendDueNotifications(w.t.ctx);
    assert.deepEqual(await states(incident.Id), [
      ['push', 'skipped', 'no push subscription'],
      ['email', 'sent', null],
      ['sms', 'pending', null],
      ['voice', 'pending', null],
    ]);
    assert.deepEqual((await paged(w.ann.id)).map((d) => [d.kind, d.recipient]), [['email', w.ann.email]]);
    w.t.clock.advance(2 * MINUTE - 1);
    assert.equal(await sendDueNotifications(w.t.ctx), 0, 'not yet');
    w.t.clock.advance(1);
    assert.equal(await sendDueNotifications(w.t.ctx), 1);
    const sms = (await paged(w.ann.id)).pop()!;
    assert.deepEqual([sms.kind, sms.recipient, sms.status], ['phone', '+14155550111', 'pending']);
    assert.match((JSON.parse(sms.payload) as { body: string }).body, new RegExp(`^Urgent incident ${incident.Id}, water main burst\\. Reply 4 to acknowledge, 6 to resolve`));
    w.t.clock.advance(3 * MINUTE);
    assert.equal(await sendDueNotifications(w.t.ctx), 1);
    const call = (await paged(w.ann.id)).pop()!;
    const payload = JSON.parse(call.payload) as { call: { url: string; statusCallback: string } };
    assert.equal(call.recipient, '+14155550111');
    assert.match(payload.call.url, /^http:\/\/muster\.test\/v1\/providers\/twilio\/voice\?token=/);
    assert.equal(payload.call.statusCallback, `${payload.call.url}&event=status`);
    assert.deepEqual((await states(incident.Id)).map((s) => s[1]), ['skipped', 'sent', 'sent', 'sent']);
  });

  test('normal and low incidents follow the low rules (default: push and email only)', async () => {
    const incident = await page(w.ann, { priority: 'normal' });
    assert.deepEqual((await rows(incident.Id)).map((r) => r.channel), ['push', 'email']);
    const low = await page(w.ann, { priority: 'low' });
    assert.deepEqual((await rows(low.Id)).map((r) => r.channel), ['push', 'email']);
  });

  test('SMS and calls without a proven phone are recorded as skipped with the reason, never dropped', async () => {
    const rules = { high: [{ channel: 'sms', delay_minutes: 0 }, { channel: 'voice', delay_minutes: 0 }], low: [] };
    await w.ok(w.as(w.ben), 'PUT', '/v1/auth/me/notification-rules', rules, 200);
    const none = await page(w.ben);
    await sendDueNotifications(w.t.ctx);
    assert.deepEqual(await states(none.Id), [['sms', 'skipped', 'no phone number'], ['voice', 'skipped', 'no phone number']]);
    await w.ok(w.as(w.ben), 'PATCH', '/v1/auth/me', { phone: '+14155550222' }, 200);
    const unproven = await page(w.ben);
    await sendDueNotifications(w.t.ctx);
    assert.deepEqual(await states(unproven.Id), [['sms', 'skipped', 'phone not verified'], ['voice', 'skipped', 'phone not verified']]);
    assert.equal((await paged(w.ben.id)).length, 0);
  });

  test('acknowledging (any path) or resolving cancels every notification not yet sent, at once', async () => {
    const acked = await page(w.ann);
    await sendDueNotifications(w.t.ctx);
    await w.ok(w.as(w.owner), 'POST', `/v1/tickets/${acked.Id}/acknowledge`, undefined, 200);
    assert.deepEqual((await states(acked.Id)).slice(2), [['sms', 'cancelled', 'acknowledged'], ['voice', 'cancelled', 'acknowledged']]);
    const timeline = await w.timeline(w.as(w.owner), acked.Id);
    assert.equal(timeline.find((e) => e.type === 'acknowledged')?.data.via, 'web', 'a session is the web app');
    const resolved = await page(w.ann);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${resolved.Id}`, { status: 'resolved' }, 200);
    assert.deepEqual(await states(resolved.Id), [
      ['push', 'skipped', 'no push subscription'],
      ['email', 'sent', null], // the rules without delay went out at once, right after the page's commit
      ['sms', 'cancelled', 'resolved'],
      ['voice', 'cancelled', 'resolved'],
    ]);
    w.t.clock.advance(10 * MINUTE);
    const before = (await paged(w.ann.id)).length;
    await sendDueNotifications(w.t.ctx);
    assert.equal((await paged(w.ann.id)).length, before, 'nothing of theirs is sent later');
  });

  test("a monitoring tool's acknowledgement (Events API) cancels them too", async () => {
    const { key } = await w.ok<{ key: string }>(w.as(w.owner), 'POST', '/v1/integrations', { name: 'Alerts', org_id: w.orgId });
    const event = (event_action: string) =>
      w.t.app.inject({ method: 'POST', url: `/v1/integrations/${key}/events`, payload: { event_action, dedup_key: 'disk-full', payload: { summary: 'disk full', source: 'db1', severity: 'critical' } } });
    assert.equal((await event('trigger')).statusCode, 202);
    const incident = await db().selectFrom('incidents').selectAll().where('source_ref', 'is not', null).orderBy('id', 'desc').executeTakeFirstOrThrow();
    await w.t.ctx.transaction(async (tx) => pagePerson(w.t.ctx, tx, incident, w.ann.id));
    await w.t.ctx.escalation.idle();
    assert.equal((await event('acknowledge')).statusCode, 202);
    assert.deepEqual((await states(incident.id)).slice(2), [['sms', 'cancelled', 'acknowledged'], ['voice', 'cancelled', 'acknowledged']]);
  });

  test('a test-mode incident pages as usual; its deliveries are recorded as suppressed', async () => {
    const incident = await page(w.ann, {}, w.testKey);
    await sendDueNotifications(w.t.ctx);
    const email = (await paged(w.ann.id)).pop()!;
    assert.deepEqual([email.kind, email.status], ['email', 'suppressed']);
    assert.equal((await states(incident.Id))[1]![1], 'sent');
  });

  // SQLite is one instance by design: there the race is between concurrent sweeps of one instance;
  // on PostgreSQL between two instances on one schema (as the escalation sweeper's test does).
  describe(testDialect === 'postgres' ? 'two instances on one database' : 'concurrent sweeps of one instance', () => {
    let other: AppContext;
    before(async () => {
      other = testDialect === 'postgres' ? await createContext(w.t.ctx.config, { log: pino({ level: 'silent' }), clock: w.t.clock }) : w.t.ctx;
    });
    after(async () => {
      if (other !== w.t.ctx) await other.close();
    });

    test('each notification is sent exactly once however many sweeps run together', async () => {
      // Delayed rules only: nothing is due at page time, so no paging run is woken and the sweeps race alone.
      await w.ok(w.as(w.admin), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'email', delay_minutes: 1 }, { channel: 'email', delay_minutes: 2 }], low: [] }, 200);
      w.t.clock.advance(60 * MINUTE);
      await sendDueNotifications(w.t.ctx); // nothing of earlier tests left due
      const ids: number[] = [];
      for (let i = 0; i < 8; i++) ids.push((await page(w.admin, { title: `Race ${i}` })).Id);
      for (let round = 0; round < 2; round++) {
        w.t.clock.advance(MINUTE);
        const counts = await Promise.all(Array.from({ length: 6 }, (_, i) => sendDueNotifications(i % 2 === 0 ? w.t.ctx : other)));
        assert.equal(counts.reduce((a, b) => a + b, 0), 8, `round ${round}: one per incident`);
      }
      assert.equal((await paged(w.admin.id)).length, 16, 'two emails per incident, no more');
      for (const id of ids) assert.deepEqual((await states(id)).map((s) => s[1]), ['sent', 'sent']);
    });
  });
});
