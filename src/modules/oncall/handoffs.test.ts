// Handoff notices: a push and an email before a shift, in the person's own zone's words, once per
// shift, exactly once across two instances on one database; the org setting turns them off.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createContext, type AppContext } from '../../context.js';
import { defaultJobs } from '../../jobs/scheduler.js';
import { dispatchWorld, signInAgain, type DispatchWorld } from '../../../test/world.js';
import { sendHandoffNotices } from './index.js';
import { noticeText } from './notice-text.js';

describe('handoff notices', () => {
  let w: DispatchWorld;
  let scheduleId: number;
  before(async () => {
    w = await dispatchWorld();
    w.t.clock.set('2026-03-02T08:00:00.000Z'); // Monday; London is on GMT until 29 March
    await signInAgain(w); // sessions last 14 days: the ones made at the world's start have ended
    await w.ok(w.as(w.ann), 'PATCH', '/v1/auth/me', { timezone: 'Europe/London' }, 200);
    await w.ok(w.as(w.ben), 'PATCH', '/v1/auth/me', { timezone: 'America/New_York' }, 200);
    const s = await w.ok<{ id: number }>(w.as(w.admin), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, {
      name: 'Water network',
      time_zone: 'Europe/London',
      layers: [{ start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] }],
    });
    scheduleId = s.id;
  });
  after(() => w.close());

  const notices = () =>
    w.t.ctx.db.selectFrom('outbox').select(['kind', 'recipient', 'payload', 'user_id']).where('topic', '=', 'oncall.handoff').orderBy('id').execute();
  const at = (iso: string) => w.t.clock.set(iso);
  const clear = () => w.t.ctx.db.deleteFrom('outbox').where('topic', '=', 'oncall.handoff').execute();

  test('the job scheduler runs the notices every minute, and the calendar writes', () => {
    const jobs = defaultJobs(w.t.ctx);
    assert.equal(jobs.find((j) => j.name === 'handoff-notices')?.intervalMs, 60_000);
    assert.ok(jobs.some((j) => j.name === 'oncall-calendars'));
  });

  test('the text is in the reader’s zone: the issue’s own sentence', () => {
    const text = noticeText({ schedule: 'Water network', zone: 'Europe/London', start: Date.parse('2026-03-06T09:00:00Z'), end: Date.parse('2026-03-09T09:00:00Z'), now: Date.parse('2026-03-06T08:45:00Z') });
    assert.equal(text, 'You are on call for Water network from 09:00 today (Europe/London) until 09:00 Monday');
    const far = noticeText({ schedule: 'Pumps', zone: 'Australia/Sydney', start: Date.parse('2026-03-06T22:00:00Z'), end: Date.parse('2026-03-20T22:00:00Z'), now: Date.parse('2026-03-06T10:00:00Z') });
    assert.equal(far, 'You are on call for Pumps from 09:00 tomorrow (Australia/Sydney) until 09:00 Saturday 21 March');
  });

  test('15 minutes before the shift: a push and an email, once', async () => {
    at('2026-03-02T08:44:59.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 0, 'not yet');
    at('2026-03-02T08:45:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 1);
    const sent = await notices();
    assert.deepEqual(sent.map((n) => [n.kind, n.recipient, n.user_id]), [['push', `user:${w.ann.id}`, w.ann.id], ['email', w.ann.email, w.ann.id]]);
    const text = 'You are on call for Water network from 09:00 today (Europe/London) until 09:00 tomorrow';
    assert.equal((JSON.parse(sent[0]!.payload) as { body: string }).body, text);
    assert.equal((JSON.parse(sent[1]!.payload) as { subject: string }).subject, text);
    at('2026-03-02T08:50:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 0, 'once per shift');
    at('2026-03-02T09:05:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 0);
    assert.equal((await notices()).length, 2);
  });

  test('in the person’s own zone: Ben reads New York time', async () => {
    await clear();
    at('2026-03-03T08:45:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 1);
    const [push] = await notices();
    assert.equal(push!.recipient, `user:${w.ben.id}`);
    assert.equal((JSON.parse(push!.payload) as { body: string }).body, 'You are on call for Water network from 04:00 today (America/New_York) until 04:00 tomorrow');
  });

  test('a run that came late still tells a shift begun up to 10 minutes ago; not one begun earlier', async () => {
    await clear();
    at('2026-03-04T09:09:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 1);
    at('2026-03-05T09:11:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 0);
  });

  test('the org setting: another lead time, or null for none', async () => {
    await clear();
    const settings = (v: number | null) => w.ok(w.as(w.admin), 'PATCH', `/v1/orgs/${w.orgSlug}/dispatch`, { handoff_notice_minutes: v }, 200);
    assert.equal((await w.call(w.as(w.ann), 'PATCH', `/v1/orgs/${w.orgSlug}/dispatch`, { handoff_notice_minutes: 30 })).statusCode, 403);
    assert.equal((await w.call(w.as(w.admin), 'PATCH', `/v1/orgs/${w.orgSlug}/dispatch`, { handoff_notice_minutes: 0 })).statusCode, 422);
    await settings(null);
    at('2026-03-06T08:50:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 0, 'turned off');
    await settings(60);
    assert.deepEqual(await w.ok(w.as(w.ann), 'GET', `/v1/orgs/${w.orgSlug}/dispatch`), { ack_timeout_minutes: { urgent: 5, high: 15 }, handoff_notice_minutes: 60, default_escalation_policy_id: null });
    at('2026-03-07T07:59:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 0);
    at('2026-03-07T08:00:00.000Z');
    assert.equal(await sendHandoffNotices(w.t.ctx), 1, 'an hour before');
    await settings(15);
  });

  test('exactly once across two instances on one database, both running the job with one clock', async () => {
    await clear();
    // A second instance: its own context (database pool, transaction queue) on the same database.
    const other: AppContext = await createContext(w.t.ctx.config, { clock: w.t.clock });
    try {
      for (const day of ['08', '09', '10']) {
        at(`2026-03-${day}T08:5${Number(day) - 8}:00.000Z`);
        const told = await Promise.all([sendHandoffNotices(w.t.ctx), sendHandoffNotices(other), sendHandoffNotices(w.t.ctx), sendHandoffNotices(other)]);
        assert.equal(told.reduce((a, b) => a + b, 0), 1, `one notice for ${day} March`);
      }
      const sent = await notices();
      assert.equal(sent.filter((n) => n.kind === 'push').length, 3);
      assert.equal(sent.filter((n) => n.kind === 'email').length, 3);
      const rows = await w.t.ctx.db.selectFrom('oncall_handoff_notices').selectAll().where('schedule_id', '=', scheduleId).where('shift_start', '>=', '2026-03-08').execute();
      assert.equal(rows.length, 3);
    } finally {
      await other.close();
    }
  });
});
