// The incident report on both databases over a history built through the API with a set clock;
// every figure below is worked out by hand from that history (docs/reports.md has the definitions).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { queryPlan, REPORTS_COMPUTED_EVERY_TIME, testDialect } from '../../../test/helpers.js';
import { dispatchWorld, type DispatchWorld } from '../../../test/world.js';
import { backfill } from '../../db/migrations/0047-incident-report-facts.js';
import { incidentReportSql, type ReportQuery } from './incident-report.repository.js';

interface Seconds {
  p50: number | null;
  p90: number | null;
  mean: number | null;
}
interface Row {
  key: string | null;
  label: string | null;
  incidents: number;
  acknowledged: number;
  resolved: number;
  mtta_seconds: Seconds;
  mttr_seconds: Seconds;
  sla_met_percent: number | null;
  escalated_percent: number | null;
  reopened: number;
}
interface Report {
  tz: string;
  group_by: string;
  livemode: boolean;
  as_of: string;
  rows: Row[];
  totals: Row;
}

describe('GET /v1/orgs/:org_slug/reports/incidents', () => {
  let w: DispatchWorld;
  const at = (iso: string) => w.t.clock.set(iso);
  const owner = () => w.as(w.owner);

  before(async () => {
    w = await dispatchWorld(REPORTS_COMPUTED_EVERY_TIME);
    const policy = await w.ok<{ id: number }>(owner(), 'POST', `/v1/orgs/${w.orgSlug}/escalation-policies`, {
      name: 'Ops',
      levels: [{ delay_minutes: 30, targets: [{ type: 'user', id: w.admin.id }] }, { delay_minutes: 30, targets: [{ type: 'user', id: w.owner.id }] }],
    });
    const patch = (id: number, body: object) => w.ok(owner(), 'PATCH', `/v1/tickets/${id}`, body, 200);
    const ack = (id: number) => w.ok(owner(), 'POST', `/v1/tickets/${id}/acknowledge`, undefined, 200);

    // Monday 5 January 2026 (UTC).
    at('2026-01-05T12:00:00Z');
    const a = (await w.incident(owner(), { title: 'A', priority: 'urgent' })).Id; // SLA due 13:00
    const b = (await w.incident(owner(), { title: 'B', priority: 'normal' })).Id; // SLA due Jan 6 12:00
    await patch(b, { assignee_id: w.ann.id });
    at('2026-01-05T12:02:00Z');
    await ack(a); // MTTA 120 s
    at('2026-01-05T12:10:00Z');
    await w.ok(w.as(w.ann), 'POST', `/v1/tickets/${b}/acknowledge`, undefined, 200); // MTTA 600 s
    at('2026-01-05T12:30:00Z');
    await patch(a, { status: 'resolved' }); // MTTR 1,800 s, in time
    at('2026-01-05T13:00:00Z');
    await patch(b, { status: 'resolved' });
    at('2026-01-05T14:00:00Z');
    await patch(b, { status: 'open' }); // reopened
    at('2026-01-05T15:00:00Z');
    await patch(b, { status: 'resolved' }); // MTTR to the last resolution: 10,800 s, in time

    // Tuesday 6 January.
    at('2026-01-06T09:00:00Z');
    const c = (await w.incident(owner(), { title: 'C', priority: 'urgent' })).Id; // SLA due 10:00
    const d = (await w.incident(owner(), { title: 'D', priority: 'high', escalation_policy_id: policy.id })).Id; // SLA due 13:00
    at('2026-01-06T09:05:00Z');
    await ack(d); // acknowledged before it was assigned: MTTA 300 s
    at('2026-01-06T09:20:00Z');
    await patch(d, { assignee_id: w.ben.id }); // reassigned: its acknowledged_at is cleared, the first acknowledgement stays
    at('2026-01-06T09:30:00Z');
    await w.ok(owner(), 'POST', `/v1/tickets/${d}/escalate`, undefined, 200); // escalated by hand
    at('2026-01-06T10:00:00Z');
    await w.incident(owner(), { title: 'E', priority: 'low' }); // SLA due Jan 8 10:00: not due by the report
    at('2026-01-06T11:00:00Z');
    await patch(c, { status: 'resolved' }); // never acknowledged; MTTR 7,200 s, an hour late
    await w.t.ctx.escalation.idle();
    // The report is asked on Wednesday 7 January, noon: D (due 13:00 yesterday) is due and missed.
    at('2026-01-07T12:00:00Z');
  });
  after(() => w.close());

  const report = async (query: string, headers = owner()) => w.ok<Report>(headers, 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?${query}`);
  const range = 'from=2026-01-05T00:00:00Z&to=2026-01-08T00:00:00Z';
  const figures = (r: Row) => [r.incidents, r.acknowledged, r.resolved, r.mtta_seconds, r.mttr_seconds, r.sla_met_percent, r.escalated_percent, r.reopened];

  test('by day in UTC: every day of the range, each figure worked out by hand, and the totals', async () => {
    const r = await report(`${range}&group_by=day&tz=UTC`);
    assert.deepEqual([r.tz, r.group_by, r.livemode], ['UTC', 'day', true]);
    // Computed for the request: its figures are of now (the clock the test set).
    assert.equal(r.as_of, '2026-01-07T12:00:00.000Z');
    assert.deepEqual(r.rows.map((x) => x.key), ['2026-01-05', '2026-01-06', '2026-01-07']);
    // Jan 5: A and B. MTTA 120, 600 (nearest rank: p50 the 1st of 2, p90 the 2nd); MTTR 1,800, 10,800; both in time; B reopened.
    assert.deepEqual(figures(r.rows[0]!), [2, 2, 2, { p50: 120, p90: 600, mean: 360 }, { p50: 1800, p90: 10800, mean: 6300 }, 100, 0, 1]);
    // Jan 6: C, D, E. Only D acknowledged (300); only C resolved (7,200, late); D due and open; E not yet due; D escalated.
    assert.deepEqual(figures(r.rows[1]!), [3, 1, 1, { p50: 300, p90: 300, mean: 300 }, { p50: 7200, p90: 7200, mean: 7200 }, 0, 33.3, 0]);
    assert.deepEqual(figures(r.rows[2]!), [0, 0, 0, { p50: null, p90: null, mean: null }, { p50: null, p90: null, mean: null }, null, null, 0]);
    // All five: MTTA 120, 300, 600 (p50 the 2nd, p90 the 3rd); MTTR 1,800, 7,200, 10,800; SLA 2 met of 4 due; 1 of 5 escalated.
    assert.deepEqual(figures(r.totals), [5, 3, 3, { p50: 300, p90: 600, mean: 340 }, { p50: 7200, p90: 10800, mean: 6600 }, 50, 20, 1]);
  });

  test('by priority, by assignee (with names), by week and month; the default grouping is the day', async () => {
    const p = await report(`${range}&group_by=priority`);
    assert.deepEqual(
      p.rows.map((x) => [x.key, x.incidents, x.sla_met_percent]),
      [['urgent', 2, 50], ['high', 1, 0], ['low', 1, null], ['normal', 1, 100]],
    );
    const byAssignee = new Map((await report(`${range}&group_by=assignee`)).rows.map((x) => [x.label, x]));
    assert.deepEqual(figures(byAssignee.get('Ann Responder')!), [1, 1, 1, { p50: 600, p90: 600, mean: 600 }, { p50: 10800, p90: 10800, mean: 10800 }, 100, 0, 1]);
    assert.deepEqual([byAssignee.get('Ben Responder')?.incidents, byAssignee.get('Ben Responder')?.escalated_percent], [1, 100]);
    const week = await report(`${range}&group_by=week&tz=UTC`);
    assert.deepEqual(week.rows.map((x) => [x.key, x.incidents]), [['2026-01-05', 5]], 'the Monday of the week');
    const month = await report('from=2025-12-15T00:00:00Z&to=2026-01-08T00:00:00Z&group_by=month&tz=UTC');
    assert.deepEqual(month.rows.map((x) => [x.key, x.incidents]), [['2025-12', 0], ['2026-01', 5]]);
    assert.equal((await report(range)).group_by, 'day');
  });

  test("the range's incidents are read through the index by org, mode and creation time (migration 0049), not the org's every incident", async () => {
    const q: ReportQuery = { orgId: w.orgId, livemode: 1, from: '2026-01-05T00:00:00.000Z', to: '2026-01-08T00:00:00.000Z', dueBy: '2026-01-07T12:00:00.000Z', group: 'day', offsets: [{ from: '2026-01-05T00:00:00.000Z', minutes: 0 }] };
    const plan = await queryPlan(w.t.ctx.db, incidentReportSql(testDialect, q).compile(w.t.ctx.db), 'enable_seqscan');
    assert.match(plan, /incidents_org_created_idx/, plan);
  });

  test("the days are the zone's: an incident at 23:30 local counts on that local day, across both DST changes in two hemispheres", async () => {
    // Test mode keeps these apart from the live history above.
    const key = w.testKey;
    const open = async (iso: string) => {
      at(iso);
      await w.ok(key, 'POST', '/v1/tickets', { title: `at ${iso}`, org_id: w.orgId });
    };
    // New York springs forward on 8 March 2026 (EST -5 -> EDT -4) and falls back on 1 November (EDT -4 -> EST -5).
    for (const iso of ['2026-03-08T04:30:00Z', '2026-03-08T05:30:00Z', '2026-03-09T03:30:00Z', '2026-03-09T04:30:00Z']) await open(iso);
    for (const iso of ['2026-11-01T03:30:00Z', '2026-11-01T04:30:00Z', '2026-11-02T04:30:00Z', '2026-11-02T05:30:00Z']) await open(iso);
    const days = async (from: string, to: string, tz: string) =>
      (await report(`from=${from}&to=${to}&group_by=day&tz=${encodeURIComponent(tz)}`, key)).rows.filter((x) => x.incidents > 0).map((x) => [x.key, x.incidents]);
    // 04:30Z Mar 8 = 23:30 EST Mar 7; 05:30Z = 00:30 Mar 8; 03:30Z Mar 9 = 23:30 EDT Mar 8; 04:30Z Mar 9 = 00:30 Mar 9.
    assert.deepEqual(await days('2026-03-07T00:00:00Z', '2026-03-11T00:00:00Z', 'America/New_York'), [['2026-03-07', 1], ['2026-03-08', 2], ['2026-03-09', 1]]);
    // 03:30Z Nov 1 = 23:30 EDT Oct 31; 04:30Z = 00:30 Nov 1; 04:30Z Nov 2 = 23:30 EST Nov 1; 05:30Z = 00:30 Nov 2.
    assert.deepEqual(await days('2026-10-30T00:00:00Z', '2026-11-04T00:00:00Z', 'America/New_York'), [['2026-10-31', 1], ['2026-11-01', 2], ['2026-11-02', 1]]);
    // Sydney: summer time ends 5 April 2026 (+11 -> +10), begins 4 October (+10 -> +11).
    for (const iso of ['2026-04-04T12:30:00Z', '2026-04-04T13:30:00Z', '2026-04-05T13:30:00Z', '2026-04-05T14:30:00Z']) await open(iso);
    // 12:30Z Apr 4 = 23:30 +11 Apr 4; 13:30Z = 00:30 Apr 5; 13:30Z Apr 5 = 23:30 +10 Apr 5; 14:30Z = 00:30 Apr 6.
    assert.deepEqual(await days('2026-04-03T00:00:00Z', '2026-04-07T00:00:00Z', 'Australia/Sydney'), [['2026-04-04', 1], ['2026-04-05', 2], ['2026-04-06', 1]]);
    for (const iso of ['2026-10-03T13:30:00Z', '2026-10-03T14:30:00Z', '2026-10-04T12:30:00Z', '2026-10-04T13:30:00Z']) await open(iso);
    // 13:30Z Oct 3 = 23:30 +10 Oct 3; 14:30Z = 00:30 Oct 4; 12:30Z Oct 4 = 23:30 +11 Oct 4; 13:30Z = 00:30 Oct 5.
    assert.deepEqual(await days('2026-10-02T00:00:00Z', '2026-10-06T00:00:00Z', 'Australia/Sydney'), [['2026-10-03', 1], ['2026-10-04', 2], ['2026-10-05', 1]]);
    // A day of 23 hours is still one row: the spring-forward day in New York has its own key.
    const spring = await report(`from=2026-03-08T05:00:00Z&to=2026-03-09T04:00:00Z&group_by=day&tz=America/New_York`, key);
    assert.deepEqual(spring.rows.map((x) => [x.key, x.incidents]), [['2026-03-08', 2]]);
    assert.equal(spring.livemode, false);
    at('2026-01-07T12:00:00Z');
  });

  test('CSV with ?format=csv or Accept: text/csv: a header row, a row per key, the totals last', async () => {
    const csv = await w.call(owner(), 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?${range}&group_by=day&tz=UTC&format=csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(String(csv.headers['content-disposition']), /attachment; filename="incidents-2026-01-05-2026-01-08-day\.csv"/);
    const lines = csv.body.split('\r\n');
    assert.equal(lines[0], 'key,label,incidents,acknowledged,resolved,mtta_p50_seconds,mtta_p90_seconds,mtta_mean_seconds,mttr_p50_seconds,mttr_p90_seconds,mttr_mean_seconds,sla_met_percent,escalated_percent,reopened');
    assert.equal(lines[1], '2026-01-05,2026-01-05,2,2,2,120,600,360,1800,10800,6300,100,0,1');
    assert.equal(lines[3], '2026-01-07,2026-01-07,0,0,0,,,,,,,,,0');
    assert.equal(lines[4], 'total,,5,3,3,300,600,340,7200,10800,6600,50,20,1');
    assert.equal(lines[5], '', 'each record ends with CRLF');
    const accepted = await w.call({ ...owner(), accept: 'text/csv' }, 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?${range}&group_by=priority`);
    assert.equal(accepted.body.split('\r\n')[1], 'urgent,urgent,2,1,2,120,120,120,1800,7200,4500,50,0,0');
  });

  test('admins and owners only: a member 403, another org 404; 422 with the field for a bad range, grouping or zone', async () => {
    assert.equal((await w.call(w.as(w.admin), 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?${range}`)).statusCode, 200);
    assert.equal((await w.call(w.as(w.ann), 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?${range}`)).statusCode, 403);
    assert.equal((await w.call(w.as(w.stranger), 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?${range}`)).statusCode, 404);
    const field = async (query: string) => {
      const res = await w.call(owner(), 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?${query}`);
      assert.equal(res.statusCode, 422, res.body);
      return res.json<{ details: { field: string }[] }>().details.map((d) => d.field);
    };
    assert.deepEqual(await field('from=2026-01-05T00:00:00Z&to=2026-01-04T00:00:00Z'), ['to']);
    assert.deepEqual(await field('from=2025-01-01T00:00:00Z&to=2026-02-06T00:00:00Z'), ['to'], 'over 400 days');
    assert.deepEqual(await field(`${range}&group_by=hour`), ['group_by']);
    assert.deepEqual(await field(`${range}&tz=Mars/Olympus`), ['tz']);
    assert.deepEqual(await field('to=2026-01-05T00:00:00Z'), ['from']);
    assert.ok((await field(`${range}&format=xml`)).includes('format'));
    // 400 days exactly is allowed.
    assert.equal((await w.call(owner(), 'GET', `/v1/orgs/${w.orgSlug}/reports/incidents?from=2025-01-01T00:00:00Z&to=2026-02-05T00:00:00Z`)).statusCode, 200);
  });
});

describe('the report facts of incidents that existed before migration 0047', () => {
  test('read from their timelines, they are the facts the timeline keeps live', async () => {
    const w = await dispatchWorld(REPORTS_COMPUTED_EVERY_TIME);
    try {
      const owner = w.as(w.owner);
      const a = (await w.incident(owner, { priority: 'urgent' })).Id;
      w.t.clock.advance(60_000);
      await w.ok(owner, 'POST', `/v1/tickets/${a}/acknowledge`, undefined, 200);
      for (const status of ['resolved', 'open', 'closed', 'in_progress', 'resolved', 'closed']) {
        w.t.clock.advance(60_000);
        await w.ok(owner, 'PATCH', `/v1/tickets/${a}`, { status }, 200);
      }
      await w.incident(owner);
      const facts = () => w.t.ctx.db.selectFrom('incidents').select(['id', 'first_acknowledged_at', 'escalated_at', 'reopened_count']).orderBy('id').execute();
      const live = await facts();
      assert.equal(live[0]!.reopened_count, 2, 'resolved -> open and closed -> in_progress; resolved -> closed is no reopening');
      assert.ok(live[0]!.first_acknowledged_at !== null && live[1]!.first_acknowledged_at === null);
      await w.t.ctx.db.updateTable('incidents').set({ first_acknowledged_at: null, escalated_at: null, reopened_count: 0 }).execute();
      await backfill(w.t.ctx.db as never);
      assert.deepEqual(await facts(), live);
    } finally {
      await w.close();
    }
  });
});
