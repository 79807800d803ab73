import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MINUTE } from '../lib/clock.js';
import { body, buildTestApp, type TestApp } from '../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../test/factories.js';
import { sweepSla } from './sla-sweeper.js';

describe('SLA sweeper', () => {
  let t: TestApp;
  let owner: TestUser;
  let helper: TestUser;
  // Keys, not cookies: the tests move the clock by far more than a session lives.
  let live: Record<string, string>;
  let testKey: Record<string, string>;
  let helperKey: Record<string, string>;
  before(async () => {
    t = await buildTestApp();
    owner = await signUp(t.app, { name: 'Owner' });
    helper = await signUp(t.app, { name: 'Helper' });
    await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: helper.email } });
    live = { 'x-api-key': (await createKey(t.app, owner.cookie, 'live')).key };
    testKey = { 'x-api-key': (await createKey(t.app, owner.cookie, 'test')).key };
    helperKey = { 'x-api-key': (await createKey(t.app, helper.cookie, 'live')).key };
  });
  after(() => t.close());

  async function urgent(headers: Record<string, string> = live): Promise<number> {
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers, payload: { title: 'Urgent thing', priority: 'urgent' } });
    assert.equal(res.statusCode, 201);
    return body<{ Id: number }>(res).Id;
  }
  const slaMails = (topic: string) =>
    t.ctx.db.selectFrom('outbox').select(['recipient', 'status', 'topic']).where('topic', '=', topic).orderBy('id').execute();
  const drain = async () => {
    // Each test starts from a quiet state: whatever earlier tests left due is marked first.
    t.clock.advance(365 * 24 * 60 * MINUTE);
    await sweepSla(t.ctx);
    await t.ctx.db.deleteFrom('outbox').where('topic', 'like', 'incident.sla_%').execute();
  };

  test('queues the warning once at 75% and the breach once past due, to the creator', async () => {
    await drain();
    await urgent();
    t.clock.advance(45 * MINUTE - 1);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 0 });
    t.clock.advance(1);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 1, breaches: 0 });
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 0 }, 'once');
    t.clock.advance(15 * MINUTE);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 0 }, 'at due: not yet breached');
    t.clock.advance(1);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 1 });
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 0 }, 'once');
    assert.deepEqual(await slaMails('incident.sla_warning'), [{ recipient: owner.email, status: 'pending', topic: 'incident.sla_warning' }]);
    assert.deepEqual(await slaMails('incident.sla_breach'), [{ recipient: owner.email, status: 'pending', topic: 'incident.sla_breach' }]);
  });

  test('mails the assignee when there is one', async () => {
    await drain();
    const id = await urgent();
    await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${id}`, headers: live, payload: { assignee_id: helper.id } });
    t.clock.advance(46 * MINUTE);
    await sweepSla(t.ctx);
    assert.deepEqual((await slaMails('incident.sla_warning')).map((m) => m.recipient), [helper.email]);
  });

  test("the email gives the due time in the recipient's own time zone, and names the zone", async () => {
    await drain();
    const patched = await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: helperKey, payload: { timezone: 'America/New_York' } });
    assert.equal(patched.statusCode, 200, patched.body);
    const id = await urgent();
    const due = body<{ sla_due_at: string }>(await t.app.inject({ method: 'GET', url: `/v1/tickets/${id}`, headers: live })).sla_due_at;
    const at = (timeZone: string) => new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(due));
    assert.notEqual(at('America/New_York'), at('UTC'), 'the zones differ at this time');
    t.clock.advance(46 * MINUTE);
    await sweepSla(t.ctx); // to the creator (UTC)
    await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${id}`, headers: live, payload: { assignee_id: helper.id } });
    t.clock.advance(15 * MINUTE);
    await sweepSla(t.ctx); // the breach, to the assignee (New York)
    const mails = await t.ctx.db.selectFrom('outbox').select(['topic', 'recipient', 'payload']).where('topic', 'like', 'incident.sla_%').orderBy('id').execute();
    const sent = mails.map((m) => ({ topic: m.topic, recipient: m.recipient, ...(JSON.parse(m.payload) as { subject: string; text: string }) }));
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.recipient, owner.email);
    assert.equal(sent[0]!.subject, `SLA warning: "Urgent thing" is due at ${at('UTC')} (UTC)`);
    assert.equal(sent[1]!.recipient, helper.email);
    assert.equal(sent[1]!.subject, `SLA breached: "Urgent thing" was due at ${at('America/New_York')} (America/New_York)`);
    assert.match(sent[1]!.text, new RegExp(`Due: \\w{3} \\d{1,2} \\w{3} \\d{4}, ${at('America/New_York')} America/New_York \\(${due.replace(/[.]/g, '\\.')}\\)`));
  });

  test('an incident found past due gets the breach email only, not a stale warning', async () => {
    await drain();
    await urgent();
    t.clock.advance(2 * 60 * MINUTE);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 1 });
    assert.deepEqual(await slaMails('incident.sla_warning'), []);
  });

  test('resolved and closed incidents are left alone', async () => {
    await drain();
    const id = await urgent();
    await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${id}`, headers: live, payload: { status: 'resolved' } });
    t.clock.advance(2 * 60 * MINUTE);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 0 });
  });

  test('test-mode incidents are marked but their emails are suppressed', async () => {
    await drain();
    await urgent(testKey);
    t.clock.advance(50 * MINUTE);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 1, breaches: 0 });
    assert.deepEqual((await slaMails('incident.sla_warning')).map((m) => m.status), ['suppressed']);
  });

  test('two sweepers racing send each email once', async () => {
    await drain();
    for (let i = 0; i < 5; i++) await urgent();
    t.clock.advance(50 * MINUTE);
    const [a, b] = await Promise.all([sweepSla(t.ctx), sweepSla(t.ctx)]);
    assert.equal(a.warnings + b.warnings, 5);
    assert.equal((await slaMails('incident.sla_warning')).length, 5);
  });

  test('the warning and the breach are each one timeline event, written by the system', async () => {
    await drain();
    const id = await urgent();
    t.clock.advance(46 * MINUTE);
    await Promise.all([sweepSla(t.ctx), sweepSla(t.ctx)]);
    t.clock.advance(15 * MINUTE);
    await Promise.all([sweepSla(t.ctx), sweepSla(t.ctx)]);
    const res = await t.app.inject({ url: `/v1/tickets/${id}/timeline`, headers: live });
    const events = body<{ events: { type: string; actor: unknown; data: Record<string, unknown> }[] }>(res).events;
    assert.deepEqual(events.map((e) => e.type), ['created', 'sla_warning', 'sla_breached']);
    assert.equal(events[1]!.actor, null);
    assert.deepEqual(events[1]!.data, { sla_due_at: events[2]!.data.sla_due_at, notified_user_id: owner.id });
  });
});
