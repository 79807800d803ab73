import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AppContext } from '../context.js';
import { MINUTE } from '../lib/clock.js';
import { secondInstance, testDialect } from '../../test/helpers.js';
import { dispatchWorld, type DispatchWorld } from '../../test/world.js';
import { sweepEscalations } from './escalation-sweeper.js';

describe('escalation of unacknowledged incidents', () => {
  let w: DispatchWorld;
  before(async () => {
    w = await dispatchWorld();
  });
  after(() => w.close());

  /** Every test starts quiet: whatever earlier tests left due has run its course. */
  async function quiet() {
    w.t.clock.advance(24 * 60 * MINUTE);
    while ((await sweepEscalations(w.t.ctx)) > 0) w.t.clock.advance(24 * 60 * MINUTE);
    await w.t.ctx.db.deleteFrom('outbox').where('topic', '=', 'incident.escalated').execute();
  }
  const escalations = (id: number) => w.timeline(w.as(w.owner), id).then((es) => es.filter((e) => e.type === 'escalated'));
  const sent = () =>
    w.t.ctx.db.selectFrom('outbox').select(['kind', 'recipient', 'status']).where('topic', '=', 'incident.escalated').orderBy('id').execute();
  const settings = (payload: object, by = w.owner) => w.call(w.as(by), 'PATCH', `/v1/orgs/${w.orgSlug}/dispatch`, payload);

  test('an unassigned urgent incident escalates at 5, 10 and 15 minutes to owners and admins, then stops', async () => {
    await quiet();
    const incident = await w.incident(w.as(w.owner), { priority: 'urgent' });
    w.t.clock.advance(5 * MINUTE - 1);
    assert.equal(await sweepEscalations(w.t.ctx), 0, 'not before the timeout');
    w.t.clock.advance(1);
    assert.equal(await sweepEscalations(w.t.ctx), 1);
    assert.equal(await sweepEscalations(w.t.ctx), 0, 'once per step');
    assert.deepEqual(
      (await sent()).map((d) => [d.kind, d.recipient]),
      [
        ['push', `user:${w.owner.id}`],
        ['email', w.owner.email],
        ['push', `user:${w.admin.id}`],
        ['email', w.admin.email],
      ],
    );
    const [first] = await escalations(incident.Id);
    assert.deepEqual(first!.data, { level: 1, timeout_minutes: 5, assignee_id: null, notified: [w.owner.id, w.admin.id] });
    assert.equal(first!.actor, null);
    for (const level of [2, 3]) {
      w.t.clock.advance(5 * MINUTE - 1);
      assert.equal(await sweepEscalations(w.t.ctx), 0);
      w.t.clock.advance(1);
      assert.equal(await sweepEscalations(w.t.ctx), 1, `step ${level}`);
    }
    w.t.clock.advance(60 * MINUTE);
    assert.equal(await sweepEscalations(w.t.ctx), 0, 'at most 3 times');
    assert.deepEqual((await escalations(incident.Id)).map((e) => e.data.level), [1, 2, 3]);
    assert.equal((await sent()).length, 12);
  });

  test('high after 15 minutes; normal and low never', async () => {
    await quiet();
    const high = await w.incident(w.as(w.owner), { priority: 'high' });
    const normal = await w.incident(w.as(w.owner));
    w.t.clock.advance(15 * MINUTE - 1);
    assert.equal(await sweepEscalations(w.t.ctx), 0);
    w.t.clock.advance(1);
    assert.equal(await sweepEscalations(w.t.ctx), 1);
    assert.equal((await escalations(high.Id)).length, 1);
    w.t.clock.advance(24 * 60 * MINUTE);
    await sweepEscalations(w.t.ctx);
    assert.equal((await escalations(normal.Id)).length, 0);
  });

  test('assigned but unacknowledged escalates; acknowledging stops it; reassignment restarts the clock', async () => {
    await quiet();
    const a = await w.incident(w.as(w.owner), { priority: 'urgent' });
    const b = await w.incident(w.as(w.owner), { priority: 'urgent' });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${a.Id}`, { assignee_id: w.ann.id });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${b.Id}`, { assignee_id: w.ben.id });
    w.t.clock.advance(4 * MINUTE);
    await w.ok(w.as(w.ben), 'POST', `/v1/tickets/${b.Id}/acknowledge`, undefined, 200);
    w.t.clock.advance(MINUTE);
    assert.equal(await sweepEscalations(w.t.ctx), 1);
    assert.equal((await escalations(a.Id))[0]?.data.assignee_id, w.ann.id);
    assert.equal((await escalations(b.Id)).length, 0);
    // Reassigned at minute 5: the new assignee has a fresh 5 minutes, and the steps count from 1 again.
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${a.Id}`, { assignee_id: w.ben.id });
    w.t.clock.advance(5 * MINUTE - 1);
    assert.equal(await sweepEscalations(w.t.ctx), 0);
    w.t.clock.advance(1);
    assert.equal(await sweepEscalations(w.t.ctx), 1);
    assert.deepEqual((await escalations(a.Id)).map((e) => [e.data.level, e.data.assignee_id]), [[1, w.ann.id], [1, w.ben.id]]);
  });

  test('resolved incidents do not escalate', async () => {
    await quiet();
    const incident = await w.incident(w.as(w.owner), { priority: 'urgent' });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'resolved' });
    w.t.clock.advance(30 * MINUTE);
    assert.equal(await sweepEscalations(w.t.ctx), 0);
  });

  test('org settings: defaults, admins change them, null turns a priority off (also for incidents already waiting)', async () => {
    await quiet();
    assert.deepEqual(await w.ok(w.as(w.ann), 'GET', `/v1/orgs/${w.orgSlug}/dispatch`), { ack_timeout_minutes: { urgent: 5, high: 15 }, handoff_notice_minutes: 15, default_escalation_policy_id: null });
    assert.equal((await settings({ ack_timeout_minutes: { urgent: 2 } }, w.ann)).statusCode, 403);
    assert.equal((await settings({ ack_timeout_minutes: { urgent: 0 } })).statusCode, 422);
    assert.equal((await settings({ ack_timeout_minutes: {} })).statusCode, 422);
    assert.equal((await w.call(w.as(w.stranger), 'GET', `/v1/orgs/${w.orgSlug}/dispatch`)).statusCode, 404);
    const changed = await settings({ ack_timeout_minutes: { urgent: 2 } }, w.admin);
    assert.deepEqual(changed.json(), { ack_timeout_minutes: { urgent: 2, high: 15 }, handoff_notice_minutes: 15, default_escalation_policy_id: null });

    const fast = await w.incident(w.as(w.owner), { priority: 'urgent' });
    w.t.clock.advance(2 * MINUTE);
    assert.equal(await sweepEscalations(w.t.ctx), 1);
    assert.equal((await escalations(fast.Id))[0]?.data.timeout_minutes, 2);
    // Turned off while the incident waits for its second step: it never comes.
    assert.equal((await settings({ ack_timeout_minutes: { urgent: null } })).statusCode, 200);
    w.t.clock.advance(10 * MINUTE);
    assert.equal(await sweepEscalations(w.t.ctx), 0);
    const off = await w.incident(w.as(w.owner), { priority: 'urgent' });
    w.t.clock.advance(60 * MINUTE);
    assert.equal(await sweepEscalations(w.t.ctx), 0);
    assert.equal((await escalations(off.Id)).length, 0);
    assert.equal((await escalations(fast.Id)).length, 1);
    await settings({ ack_timeout_minutes: { urgent: 5 } });
  });

  test('test-mode incidents escalate with their emails and pushes suppressed', async () => {
    await quiet();
    await w.incident(w.testKey, { priority: 'urgent' });
    w.t.clock.advance(5 * MINUTE);
    assert.equal(await sweepEscalations(w.t.ctx), 1);
    assert.ok((await sent()).every((d) => d.status === 'suppressed'));
  });

  // SQLite is one instance by design (better-sqlite3 blocks the thread while it waits for a lock,
  // so two instances in one test process would wait on each other): there the race is between
  // concurrent sweeps of one instance; on PostgreSQL between two instances on one schema.
  describe(testDialect === 'postgres' ? 'two instances on one database' : 'concurrent sweeps of one instance', () => {
    let other: AppContext;
    let closeOther: () => Promise<void>;
    before(async () => {
      ({ ctx: other, close: closeOther } = await secondInstance(w.t));
    });
    after(() => closeOther());

    test('each step happens exactly once across every sweeper, however often they sweep together', async () => {
      await quiet();
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push((await w.incident(w.as(w.owner), { priority: 'urgent', title: `Race ${i}` })).Id);
      for (let step = 1; step <= 3; step++) {
        w.t.clock.advance(5 * MINUTE);
        const counts = await Promise.all(Array.from({ length: 6 }, (_, i) => sweepEscalations(i % 2 === 0 ? w.t.ctx : other)));
        assert.equal(counts.reduce((a, b) => a + b, 0), 6, `step ${step}: one per incident`);
      }
      for (const id of ids) assert.deepEqual((await escalations(id)).map((e) => e.data.level), [1, 2, 3]);
      assert.equal((await sent()).length, 6 * 3 * 4, 'a push and an email to the owner and the admin, per step');
    });
  });
});
