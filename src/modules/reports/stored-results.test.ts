// Stored report answers (stored-results.ts): served while the data holds, the last one with its
// `as_of` while one instance recomputes, recomputed when the incidents or schedules change or the
// answer ages, one recomputation across instances, `Cache-Control: no-cache` computing for the request.
// Every answer is stored here (REPORT_STORE_AFTER_MS=0) and no request waits for a recomputation
// (REPORT_FRESH_WAIT_MS=0), so which answer a request gets depends on the data and the clock alone;
// each test waits for the recomputations it started (ctx.reportStore.idle()).
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../app.js';
import { REPORTS_COMPUTED_EVERY_TIME, secondInstance, testDialect } from '../../../test/helpers.js';
import { dispatchWorld, signInAgain, type DispatchWorld } from '../../../test/world.js';

interface Report {
  as_of: string;
  totals: { incidents: number; hours_on_call?: number; pages?: number };
}

const STORED = { REPORT_STORE_AFTER_MS: '0', REPORT_FRESH_WAIT_MS: '0', REPORT_MAX_AGE_SECONDS: '60', REPORT_MAX_STALE_SECONDS: '600' };
const RANGE = 'from=2026-03-01T00:00:00Z&to=2026-03-08T00:00:00Z&tz=UTC';

describe(`stored report answers (${testDialect})`, () => {
  let w: DispatchWorld;
  const owner = () => w.as(w.owner);
  const incidents = (headers: Record<string, string> = {}) => w.ok<Report>({ ...owner(), ...headers }, 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?${RANGE}&group_by=day`);
  const oncall = () => w.ok<Report>(owner(), 'GET', `/v1/orgs/${w.orgSlug}/reports/oncall?${RANGE}`);
  const computed = () => w.t.ctx.reportStore.computed;
  /** The answer once every recomputation the first request may start (the clock moved since) is done. */
  const current = async () => {
    await incidents();
    await w.t.ctx.reportStore.idle();
    return incidents();
  };
  const stored = () => w.t.ctx.db.selectFrom('report_results').select(['kind', 'as_of', 'lease_token']).where('org_id', '=', w.orgId).execute();

  before(async () => {
    w = await dispatchWorld(STORED);
    w.t.clock.set('2026-03-02T10:00:00Z');
    await signInAgain(w);
    await w.incident(owner(), { title: 'First' });
  });
  after(() => w.close());

  test('served while the incidents hold; after a change the stored answer with its as_of, one recomputation, then the new one', async () => {
    const first = await incidents();
    assert.deepEqual([first.totals.incidents, first.as_of], [1, '2026-03-02T10:00:00.000Z']);
    const n = computed();
    w.t.clock.set('2026-03-02T10:00:30Z');
    // Nothing changed, 30 s later: the stored answer, not computed again.
    assert.deepEqual(await incidents(), first);
    assert.equal(computed(), n);
    assert.deepEqual((await stored()).map((r) => r.kind), ['incidents']);

    await w.incident(owner(), { title: 'Second' });
    // The incidents changed: the first request gets the stored answer, as of before the change, and
    // starts its recomputation; requests meanwhile get the stored answer or, once it is done, the new one.
    assert.deepEqual(await incidents(), first);
    const during = await Promise.all([incidents(), incidents(), incidents()]);
    await w.t.ctx.reportStore.idle();
    assert.equal(computed(), n + 1, 'one recomputation');
    const after = await incidents();
    assert.deepEqual([after.totals.incidents, after.as_of], [2, '2026-03-02T10:00:30.000Z']);
    for (const r of during) assert.ok(isDeepStrictEqual(r, first) || isDeepStrictEqual(r, after), JSON.stringify(r));
    assert.equal(computed(), n + 1);
  });

  test('an answer older than REPORT_MAX_AGE_SECONDS is recomputed though nothing changed', async () => {
    const before = await current();
    const n = computed();
    w.t.clock.set(new Date(Date.parse(before.as_of) + 59_000).toISOString());
    assert.deepEqual(await incidents(), before);
    w.t.clock.set(new Date(Date.parse(before.as_of) + 60_000).toISOString());
    assert.deepEqual(await incidents(), before, 'the stored answer while it is recomputed');
    await w.t.ctx.reportStore.idle();
    assert.equal(computed(), n + 1);
    assert.equal((await incidents()).as_of, new Date(Date.parse(before.as_of) + 60_000).toISOString());
  });

  test('an answer older than REPORT_MAX_STALE_SECONDS is never served: the request waits for the new one', async () => {
    const before = await current();
    await w.incident(owner(), { title: 'After a quiet while' });
    const n = computed();
    const later = new Date(Date.parse(before.as_of) + 600_000).toISOString();
    w.t.clock.set(later);
    const r = await incidents();
    assert.deepEqual([r.totals.incidents, r.as_of, computed()], [before.totals.incidents + 1, later, n + 1]);
  });

  test('Cache-Control: no-cache computes the answer for the request, and it is stored', async () => {
    const before = await current();
    await w.incident(owner(), { title: 'Third' });
    const n = computed();
    const now = w.t.clock.now().toISOString();
    const fresh = await incidents({ 'cache-control': 'no-cache' });
    assert.deepEqual([fresh.totals.incidents, fresh.as_of, computed()], [before.totals.incidents + 1, now, n + 1]);
    assert.deepEqual(await incidents(), fresh, 'the next request gets it stored');
    assert.equal(computed(), n + 1);
  });

  test('the on-call report is recomputed when a schedule changes, though no incident did', async () => {
    const first = await oncall();
    assert.equal(first.totals.hours_on_call, 0);
    const n = computed();
    assert.deepEqual(await oncall(), first);
    await w.ok(owner(), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, {
      name: 'Primary',
      time_zone: 'UTC',
      layers: [{ name: 'Week', start: '2026-03-01T00:00', turn: { unit: 'week', length: 1 }, users: [w.ann.id] }],
    }, 201);
    // The schedules' history counts from the schedule's creation: 9 minutes later (within
    // REPORT_MAX_STALE_SECONDS of the stored answer), Ann has served 0.15 hours.
    const created = w.t.clock.nowMs();
    w.t.clock.set(new Date(created + 9 * 60_000).toISOString());
    assert.deepEqual(await oncall(), first, 'the stored answer while it is recomputed');
    await w.t.ctx.reportStore.idle();
    assert.equal(computed(), n + 1);
    const after = await oncall();
    assert.deepEqual([after.totals.hours_on_call, after.as_of], [0.15, new Date(created + 9 * 60_000).toISOString()]);
  });

  test("a page alone (its incident's row unchanged) makes the on-call answer recomputed", async () => {
    const incident = await w.incident(owner(), { title: 'Paged behind the API' });
    await oncall();
    await w.t.ctx.reportStore.idle();
    const before = await oncall();
    const n = computed();
    await w.t.ctx.db
      .insertInto('paging_pages')
      .values({ incident_id: incident.Id, org_id: w.orgId, livemode: 1, user_id: w.ann.id, level: 2, loop: 0, target_type: 'user', target_id: w.ann.id, created_at: w.t.clock.now().toISOString() })
      .execute();
    assert.deepEqual(await oncall(), before, 'the stored answer while it is recomputed');
    await w.t.ctx.reportStore.idle();
    assert.equal(computed(), n + 1);
    assert.equal((await oncall()).totals.pages, (before.totals.pages ?? 0) + 1);
  });

  test('every column a report reads moves the version when written alone (first acknowledgement, first escalation, reopen count)', async () => {
    const incident = await w.incident(owner(), { title: 'Written behind the API' });
    const version = async () =>
      Number((await w.t.ctx.db.selectFrom('incident_list_versions').select('version').where('org_id', '=', w.orgId).where('livemode', '=', 1).executeTakeFirstOrThrow()).version);
    const at = w.t.clock.now().toISOString();
    for (const set of [{ first_acknowledged_at: at }, { escalated_at: at }, { reopened_count: 1 }]) {
      const before = await version();
      await w.t.ctx.db.updateTable('incidents').set(set).where('id', '=', incident.Id).execute();
      assert.ok((await version()) > before, `${Object.keys(set)[0]} moved the version`);
    }
  });

  test("a lease held by another instance: its stored answer is served and nothing is computed here until the lease ends", async () => {
    const before = await current();
    await w.incident(owner(), { title: 'Fourth' });
    const leaseEnd = new Date(w.t.clock.nowMs() + 30_000).toISOString();
    await w.t.ctx.db.updateTable('report_results').set({ lease_until: leaseEnd, lease_token: 'another instance' }).where('org_id', '=', w.orgId).where('kind', '=', 'incidents').execute();
    const n = computed();
    assert.deepEqual(await incidents(), before);
    await w.t.ctx.reportStore.idle();
    assert.equal(computed(), n, 'the lease holder computes, not this instance');
    // The holder died: once its lease ends, the next request recomputes.
    w.t.clock.set(leaseEnd);
    assert.deepEqual(await incidents(), before);
    await w.t.ctx.reportStore.idle();
    assert.equal(computed(), n + 1);
    const after = await incidents();
    assert.deepEqual([after.totals.incidents, after.as_of], [before.totals.incidents + 1, leaseEnd]);
    assert.deepEqual((await stored()).map((r) => r.lease_token), [null, null]);
  });

  test('two instances asked at once after a change: one recomputes, both serve the stored answer meanwhile, then the new one', async () => {
    const other = await secondInstance(w.t);
    const app = other.ctx === w.t.ctx ? w.t.app : await buildApp(other.ctx);
    try {
      const ask = async (on: typeof app) => {
        const res = await on.inject({ method: 'GET', url: `/v1/orgs/${w.orgSlug}/reports/incidents?${RANGE}&group_by=day`, headers: owner() });
        assert.equal(res.statusCode, 200, res.body);
        return res.json<Report>();
      };
      const before = await current();
      await w.incident(owner(), { title: 'Fifth' });
      const n = computed() + (other.ctx === w.t.ctx ? 0 : other.ctx.reportStore.computed);
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(i % 2 === 0 ? w.t.app : app)));
      await Promise.all([w.t.ctx.reportStore.idle(), other.ctx.reportStore.idle()]);
      const m = computed() + (other.ctx === w.t.ctx ? 0 : other.ctx.reportStore.computed);
      assert.equal(m, n + 1, 'one recomputation across the instances');
      const after = await ask(app);
      assert.equal(after.totals.incidents, before.totals.incidents + 1);
      assert.deepEqual(await ask(w.t.app), after);
      // Each got the answer stored before the change, or the new one once it was stored.
      for (const a of answers) assert.ok(isDeepStrictEqual(a, before) || isDeepStrictEqual(a, after), JSON.stringify(a));
      assert.ok(answers.some((a) => isDeepStrictEqual(a, before)), 'the first requests got the stored answer');
    } finally {
      if (app !== w.t.app) await app.close();
      await other.close();
    }
  });
  test('an answer nobody asked for a day is deleted when a new question of its org is stored', async () => {
    const before = await current();
    const questions = async () => (await w.t.ctx.db.selectFrom('report_results').select('question').where('org_id', '=', w.orgId).execute()).map((r) => r.question);
    assert.ok((await questions()).some((q) => q.includes('2026-03-01T00:00:00.000Z')));
    w.t.clock.set(new Date(Date.parse(before.as_of) + 86_400_000 + 60_000).toISOString());
    await w.ok(owner(), 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?from=2026-02-01T00:00:00Z&to=2026-02-08T00:00:00Z&tz=UTC`);
    assert.deepEqual(await questions(), [JSON.stringify({ from: '2026-02-01T00:00:00.000Z', to: '2026-02-08T00:00:00.000Z', tz: 'UTC', group_by: 'day' })]);
  });
});

describe(`a recomputation waited for (REPORT_FRESH_WAIT_MS) (${testDialect})`, () => {
  test('a request that comes while the recomputation it started runs waits for it, up to the wait, and gets the new answer; access is checked before any answer', async () => {
    // A minute's wait: far longer than this recomputation takes, so the answer is the new one whatever the machine's load.
    const w = await dispatchWorld({ ...STORED, REPORT_FRESH_WAIT_MS: '60000' });
    try {
      const url = `/v1/orgs/${w.orgSlug}/reports/incidents?${RANGE}`;
      w.t.clock.set('2026-03-02T10:00:00Z');
      await signInAgain(w);
      const first = await w.ok<Report>(w.as(w.owner), 'GET', url);
      await w.incident(w.as(w.owner), { title: 'Changed' });
      w.t.clock.set('2026-03-02T10:00:10Z');
      const next = await w.ok<Report>(w.as(w.owner), 'GET', url);
      assert.deepEqual([next.totals.incidents, next.as_of], [first.totals.incidents + 1, '2026-03-02T10:00:10.000Z']);
      // A member gets 403 and another org's person 404, with an answer stored for the question.
      assert.equal((await w.call(w.as(w.ann), 'GET', url)).statusCode, 403);
      assert.equal((await w.call(w.as(w.stranger), 'GET', url)).statusCode, 404);
    } finally {
      await w.close();
    }
  });
});

describe(`stored report answers and account deletion (${testDialect})`, () => {
  test('deleting an account deletes every stored answer (one may name the person); the next request computes without them', async () => {
    const w = await dispatchWorld(STORED);
    try {
      const incident = await w.incident(w.as(w.owner), { title: 'For Ann' });
      await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { assignee_id: w.ann.id }, 200);
      // Another question, of a year without incidents: every stored answer goes, not only those naming her.
      const other = `/v1/orgs/${w.orgSlug}/reports/incidents?from=2020-01-01T00:00:00Z&to=2021-01-01T00:00:00Z&group_by=assignee`;
      const labels = (r: { rows: { label: string | null }[] }) => r.rows.map((x) => x.label);
      // Today's range, by assignee: Ann is named.
      const now = w.t.clock.nowMs();
      const today = `/v1/orgs/${w.orgSlug}/reports/incidents?from=${new Date(now - 86_400_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}&group_by=assignee`;
      assert.deepEqual(labels(await w.ok(w.as(w.owner), 'GET', today)), ['Ann Responder']);
      await w.ok(w.as(w.owner), 'GET', other);
      assert.equal((await w.t.ctx.db.selectFrom('report_results').select('org_id').execute()).length, 2);
      await w.ok(w.as(w.ann), 'DELETE', '/v1/auth/me', { password: w.ann.password });
      assert.deepEqual(await w.t.ctx.db.selectFrom('report_results').selectAll().execute(), []);
      const n = w.t.ctx.reportStore.computed;
      assert.deepEqual(labels(await w.ok(w.as(w.owner), 'GET', today)), [null]);
      assert.equal(w.t.ctx.reportStore.computed, n + 1);
    } finally {
      await w.close();
    }
  });
});

describe(`quick report answers are not stored (${testDialect})`, () => {
  let w: DispatchWorld;
  before(async () => {
    w = await dispatchWorld(REPORTS_COMPUTED_EVERY_TIME);
  });
  after(() => w.close());

  test('every request computes, and nothing is written', async () => {
    const url = `/v1/orgs/${w.orgSlug}/reports/incidents?${RANGE}`;
    const n = w.t.ctx.reportStore.computed;
    await w.ok(w.as(w.owner), 'GET', url);
    await w.ok(w.as(w.owner), 'GET', url);
    assert.equal(w.t.ctx.reportStore.computed, n + 2);
    assert.deepEqual(await w.t.ctx.db.selectFrom('report_results').selectAll().execute(), []);
  });
});
