// The on-call report on both databases over a history made by the real paging path (an escalation
// policy, incidents, the clock moved and the paging sweep run as the scheduler would) and real
// schedules; every figure below is worked out by hand from that history (docs/reports.md has the
// definitions and this same example).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { queryPlan, REPORTS_COMPUTED_EVERY_TIME, testDialect } from '../../../test/helpers.js';
import { signInAgain, dispatchWorld, type DispatchWorld } from '../../../test/world.js';
import { runPaging } from '../paging/index.js';
import { pageFiguresSql } from './oncall-report.repository.js';
import { offsetsOver } from './periods.js';

interface Row {
  user_id: number | null;
  name: string | null;
  timezone: string | null;
  hours_on_call: number;
  pages: number;
  night_pages: number;
  weekend_pages: number;
  acknowledged: number;
  mtta_seconds: number | null;
  escalated_past: number;
}
interface Report {
  from: string;
  to: string;
  tz: string;
  livemode: boolean;
  rows: Row[];
  totals: Row;
}

describe('GET /v1/orgs/:org_slug/reports/oncall', () => {
  let w: DispatchWorld;
  const owner = () => w.as(w.owner);
  const ctx = () => w.t.ctx;
  /** Sets the clock, then runs the paging sweep as the scheduler would and waits for the runs it woke. */
  async function at(iso: string) {
    w.t.clock.set(iso);
    await runPaging(ctx());
    await ctx().escalation.idle();
  }
  const ack = (who: { cookie: string }, id: number) => w.ok(w.as(who), 'POST', `/v1/tickets/${id}/acknowledge`, undefined, 200);

  before(async () => {
    w = await dispatchWorld(REPORTS_COMPUTED_EVERY_TIME);
    w.t.clock.set('2026-03-01T00:00:00Z');
    await signInAgain(w);
    // Ann lives in Berlin (CET +1, CEST +2 from 29 March 01:00 UTC), Ben in New York (EST -5, EDT -4
    // from 8 March 07:00 UTC); Adam and Olga keep the default, UTC.
    await w.ok(w.as(w.ann), 'PATCH', '/v1/auth/me', { timezone: 'Europe/Berlin' }, 200);
    await w.ok(w.as(w.ben), 'PATCH', '/v1/auth/me', { timezone: 'America/New_York' }, 200);

    // Hours. "Primary" (Berlin time): day-long turns at 09:00 local from Saturday 28 March, Ann then
    // Ben. Ann 28 Mar 08:00Z -> 29 Mar 07:00Z: 23 h (the clocks went forward that night); Ben
    // 29 Mar 07:00Z -> 30 Mar 07:00Z: 24 h; Ann 30 Mar 07:00Z -> 31 Mar 07:00Z; Ben from 31 Mar 07:00Z.
    // "Secondary" (UTC): Olga from 30 March 00:00Z, but Ann by an override for 30 March (00:00Z to
    // 24:00Z), which overlaps her Primary turn: she is on call once, 30 Mar 00:00Z -> 31 Mar 07:00Z.
    const schedules = `/v1/orgs/${w.orgSlug}/schedules`;
    await w.ok(owner(), 'POST', schedules, { name: 'Primary', time_zone: 'Europe/Berlin', layers: [{ start: '2026-03-28T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] }] });
    const secondary = await w.ok<{ id: number }>(owner(), 'POST', schedules, { name: 'Secondary', time_zone: 'UTC', layers: [{ start: '2026-03-30T00:00', turn: { unit: 'day', length: 1 }, users: [w.owner.id] }] });
    await w.ok(owner(), 'POST', `${schedules}/${secondary.id}/overrides`, { user_id: w.ann.id, start: '2026-03-30T00:00:00Z', end: '2026-03-31T00:00:00Z' });

    // Pages. Level 1 pages Ann and Ben; after 5 minutes level 2 pages Adam; after 5 more the
    // escalation is exhausted (no repeat).
    const policy = await w.ok<{ id: number }>(owner(), 'POST', `/v1/orgs/${w.orgSlug}/escalation-policies`, {
      name: 'Water mains',
      levels: [
        { delay_minutes: 5, targets: [{ type: 'user', id: w.ann.id }, { type: 'user', id: w.ben.id }] },
        { delay_minutes: 5, targets: [{ type: 'user', id: w.admin.id }] },
      ],
    });
    const open = async (iso: string, headers = owner(), priority = 'urgent') => {
      await at(iso);
      const { Id } = await w.ok<{ Id: number }>(headers, 'POST', '/v1/tickets', { title: `at ${iso}`, org_id: w.orgId, priority, escalation_policy_id: policy.id });
      await ctx().escalation.idle();
      return Id;
    };

    // I1, Tue 3 Mar 05:30Z: Ann 06:30 Berlin (night), Ben 00:30 New York (night, past midnight). Ann acknowledges at 05:32 (120 s).
    const i1 = await open('2026-03-03T05:30:00Z');
    await at('2026-03-03T05:32:00Z');
    await ack(w.ann, i1);
    // I2, Tue 3 Mar 21:00Z: Ann 22:00 (night: the window starts at 22:00), Ben 16:00 (day). Ben acknowledges at 21:04 (240 s).
    const i2 = await open('2026-03-03T21:00:00Z');
    await at('2026-03-03T21:04:00Z');
    await ack(w.ben, i2);
    // I3, Wed 4 Mar 06:00Z: Ann 07:00 (day: the window ends at 07:00), Ben 01:00 (night). Nobody
    // answers: at 06:05 level 2 pages Adam (06:05 UTC: night), past Ann and Ben; Adam acknowledges at 06:06 (60 s).
    const i3 = await open('2026-03-04T06:00:00Z');
    await at('2026-03-04T06:05:00Z');
    await at('2026-03-04T06:06:00Z');
    await ack(w.admin, i3);
    // I4, Sat 7 Mar 23:30Z: Ann Sun 00:30 (night, weekend), Ben Sat 18:30 (day, weekend). Level 2 at
    // 23:35 pages Adam (night, weekend), past Ann and Ben; at 23:40 the escalation is exhausted, past
    // Adam, who never acknowledges. Olga pages Ann by hand at 23:45 (Sun 00:45: night, weekend); Ann
    // acknowledges at 23:50: that answers her page by hand (300 s), not the level-1 page before it.
    const i4 = await open('2026-03-07T23:30:00Z');
    await at('2026-03-07T23:35:00Z');
    await at('2026-03-07T23:40:00Z');
    await at('2026-03-07T23:45:00Z');
    await w.ok(owner(), 'POST', `/v1/tickets/${i4}/page`, { user_ids: [w.ann.id] }, 201);
    await at('2026-03-07T23:50:00Z');
    await ack(w.ann, i4);
    // I5, Mon 9 Mar 02:30Z, the day New York moved to EDT: Ben Sun 8 Mar 22:30 EDT (night, weekend;
    // by the winter offset it would be 21:30), Ann Mon 03:30 (night). Ben acknowledges at 02:33 (180 s).
    const i5 = await open('2026-03-09T02:30:00Z');
    await at('2026-03-09T02:33:00Z');
    await ack(w.ben, i5);
    // In test mode, apart: Tue 10 Mar 12:00Z, Ann and Ben paged (13:00 Berlin, 08:00 New York); a
    // normal incident pages its first level only, and nobody answers.
    await open('2026-03-10T12:00:00Z', w.testKey, 'normal');
    // I6, Sun 29 Mar 20:30Z, the day Berlin moved to CEST: Ann 22:30 CEST (night, weekend; by the
    // winter offset 21:30), Ben 16:30 EDT (day, weekend). Ann acknowledges at 20:33 (180 s).
    w.t.clock.set('2026-03-29T20:00:00Z');
    await signInAgain(w); // the sessions of 1 March have ended
    const i6 = await open('2026-03-29T20:30:00Z');
    await at('2026-03-29T20:33:00Z');
    await ack(w.ann, i6);
    // The report is asked on 2 April: every shift of March is served.
    w.t.clock.set('2026-04-02T12:00:00Z');
  });
  after(() => w.close());

  const range = 'from=2026-03-01T00:00:00Z&to=2026-04-01T00:00:00Z';
  const report = (query: string, headers = owner()) => w.ok<Report>(headers, 'GET', `/v1/orgs/${w.orgSlug}/reports/oncall?${query}`);
  const figures = (r: Row) => [r.name, r.timezone, r.hours_on_call, r.pages, r.night_pages, r.weekend_pages, r.acknowledged, r.mtta_seconds, r.escalated_past];

  test('per person, each figure worked out by hand, sorted by pages then name, and the totals', async () => {
    const r = await report(`${range}&tz=Europe/Berlin`);
    assert.deepEqual([r.from, r.to, r.tz, r.livemode], ['2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z', 'Europe/Berlin', true]);
    assert.deepEqual(r.rows.map((x) => x.user_id), [w.ann.id, w.ben.id, w.admin.id, w.owner.id]);
    // Ann: hours 23 + 31 (Primary and the override joined) = 54. Pages: I1-I6 at level 1 and I4 by
    // hand, 7; at night all but I3 (07:00), 6; on a weekend I4 twice and I6, 3. Acknowledged I1 (120 s),
    // I4 by hand (300 s), I6 (180 s): mean 200. Moved past: I3 and I4's level 1, 2.
    assert.deepEqual(figures(r.rows[0]!), ['Ann Responder', 'Europe/Berlin', 54, 7, 6, 3, 3, 200, 2]);
    // Ben: hours 24 + 17 (31 Mar 07:00Z to the end of the range) = 41. Pages I1-I6, 6; at night I1,
    // I3, I5, 3; on a weekend (his) I4, I5, I6, 3. Acknowledged I2 (240 s), I5 (180 s): 210. Moved past: I3, I4.
    assert.deepEqual(figures(r.rows[1]!), ['Ben Responder', 'America/New_York', 41, 6, 3, 3, 2, 210, 2]);
    // Adam: no hours; I3 and I4 at level 2, both at night in UTC, I4 on a Saturday; I3 acknowledged in 60 s; I4 exhausted past him.
    assert.deepEqual(figures(r.rows[2]!), ['Adam Admin', 'UTC', 0, 2, 2, 1, 1, 60, 1]);
    // Olga: never paged; on call 31 March on Secondary, 24 h.
    assert.deepEqual(figures(r.rows[3]!), ['Olga Owner', 'UTC', 24, 0, 0, 0, 0, null, 0]);
    // Totals: 119 h; 15 pages, 11 at night, 7 on weekends; 6 acknowledged, mean (120 + 300 + 180 + 240 + 180 + 60) / 6 = 180; 5 moved past.
    assert.deepEqual([r.totals.user_id, ...figures(r.totals)], [null, null, null, 119, 15, 11, 7, 6, 180, 5]);
  });

  test('hours are served hours: a shift still ahead of now does not count; test mode counts its own pages', async () => {
    w.t.clock.set('2026-03-30T19:00:00Z');
    const early = await report(range);
    // Ann 23 + 19 (30 Mar 00:00Z to now); Ben 24; Olga's Secondary starts 31 March for her: no hours yet, no row.
    assert.deepEqual(early.rows.map((x) => [x.name, x.hours_on_call, x.pages]), [['Ann Responder', 42, 7], ['Ben Responder', 24, 6], ['Adam Admin', 0, 2]]);
    assert.equal(early.tz, 'UTC', "the default zone is the org owner's");
    w.t.clock.set('2026-04-02T12:00:00Z');
    // The schedules are shared by both modes; the pages are the mode's own: one each for Ann and Ben on 10 March, in the day.
    const testMode = await report(range, w.testKey);
    assert.equal(testMode.livemode, false);
    assert.deepEqual(testMode.rows.map((x) => figures(x)), [
      ['Ann Responder', 'Europe/Berlin', 54, 1, 0, 0, 0, null, 0],
      ['Ben Responder', 'America/New_York', 41, 1, 0, 0, 0, null, 0],
      ['Olga Owner', 'UTC', 24, 0, 0, 0, 0, null, 0],
    ]);
  });

  test('CSV with ?format=csv or Accept: text/csv: a header row, a row per person, the totals last', async () => {
    const csv = await w.call(owner(), 'GET', `/v1/orgs/${w.orgSlug}/reports/oncall?${range}&tz=America/New_York&format=csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    // The range's ends as days in the report's zone: 1 March 00:00Z is still 28 February in New York.
    assert.match(String(csv.headers['content-disposition']), /attachment; filename="oncall-2026-02-28-2026-03-31\.csv"/);
    const lines = csv.body.split('\r\n');
    assert.equal(lines[0], 'user_id,name,timezone,hours_on_call,pages,night_pages,weekend_pages,acknowledged,mtta_seconds,escalated_past');
    assert.equal(lines[1], `${w.ann.id},Ann Responder,Europe/Berlin,54,7,6,3,3,200,2`);
    assert.equal(lines[4], `${w.owner.id},Olga Owner,UTC,24,0,0,0,0,,0`);
    assert.equal(lines[5], 'total,,,119,15,11,7,6,180,5');
    assert.equal(lines[6], '', 'each record ends with CRLF');
    const accepted = await w.call({ ...owner(), accept: 'text/csv' }, 'GET', `/v1/orgs/${w.orgSlug}/reports/oncall?${range}`);
    assert.equal(accepted.body.split('\r\n')[2], `${w.ben.id},Ben Responder,America/New_York,41,6,3,3,2,210,2`);
  });

  test("the range's pages are read through the index by org, mode and time (migration 0048), not the whole table", async () => {
    const [from, to] = [Date.parse('2026-03-01T00:00:00Z'), Date.parse('2026-04-01T00:00:00Z')];
    const q = { orgId: w.orgId, livemode: 1, from: new Date(from).toISOString(), to: new Date(to).toISOString() } as const;
    const zones = ['UTC', 'Europe/Berlin'].map((zone) => ({ zone, offsets: offsetsOver(zone, from, to) }));
    const plan = await queryPlan(ctx().db, pageFiguresSql(testDialect, q, zones).compile(ctx().db), 'enable_seqscan');
    assert.match(plan, /paging_pages_org_time_idx/, plan);
  });

  test('admins and owners only: a member 403, another org 404; 422 with the field for a bad range or zone', async () => {
    const url = (query: string) => `/v1/orgs/${w.orgSlug}/reports/oncall?${query}`;
    assert.equal((await w.call(w.as(w.admin), 'GET', url(range))).statusCode, 200);
    assert.equal((await w.call(w.as(w.ann), 'GET', url(range))).statusCode, 403);
    assert.equal((await w.call(w.as(w.stranger), 'GET', url(range))).statusCode, 404);
    const field = async (query: string) => {
      const res = await w.call(owner(), 'GET', url(query));
      assert.equal(res.statusCode, 422, res.body);
      return res.json<{ details: { field: string }[] }>().details.map((d) => d.field);
    };
    assert.deepEqual(await field('from=2026-03-05T00:00:00Z&to=2026-03-04T00:00:00Z'), ['to']);
    assert.deepEqual(await field('from=2025-01-01T00:00:00Z&to=2026-02-06T00:00:00Z'), ['to'], 'over 400 days');
    assert.deepEqual(await field(`${range}&tz=Mars/Olympus`), ['tz']);
    assert.deepEqual(await field('to=2026-03-05T00:00:00Z'), ['from']);
  });
});

// The autumn changes, south and north: Sydney leaves daylight saving on Sunday 5 April 2026 (03:00
// AEDT, +11, becomes 02:00 AEST, +10: 16:00Z on 4 April), London on Sunday 25 October 2026 (02:00 BST,
// +1, becomes 01:00 GMT: 01:00Z). Each day with the change is 25 hours long, and the same UTC hour of
// day falls an hour earlier on the wall clock after it. And Sydney's spring change (4 October), a
// 23-hour day (the northern spring changes are the March history above).
describe('GET /v1/orgs/:org_slug/reports/oncall across the autumn changes of both hemispheres and Sydney’s spring', () => {
  let w: DispatchWorld;
  const owner = () => w.as(w.owner);
  const figures = (r: Row) => [r.name, r.timezone, r.hours_on_call, r.pages, r.night_pages, r.weekend_pages, r.acknowledged, r.mtta_seconds];
  const report = (query: string) => w.ok<Report>(owner(), 'GET', `/v1/orgs/${w.orgSlug}/reports/oncall?${query}`);
  /** An incident at `iso`, `who` paged by hand, and their acknowledgement 60 s later. */
  async function pageAt(iso: string, who: { id: number; cookie: string }) {
    w.t.clock.set(iso);
    const { Id } = await w.ok<{ Id: number }>(owner(), 'POST', '/v1/tickets', { title: `at ${iso}`, org_id: w.orgId, priority: 'urgent' });
    await w.ok(owner(), 'POST', `/v1/tickets/${Id}/page`, { user_ids: [who.id] }, 201);
    w.t.clock.set(new Date(Date.parse(iso) + 60_000).toISOString());
    await w.ok(w.as(who), 'POST', `/v1/tickets/${Id}/acknowledge`, undefined, 200);
  }

  before(async () => {
    w = await dispatchWorld(REPORTS_COMPUTED_EVERY_TIME);
    w.t.clock.set('2026-04-01T00:00:00Z');
    await signInAgain(w);
    await w.ok(w.as(w.ann), 'PATCH', '/v1/auth/me', { timezone: 'Australia/Sydney' }, 200);
    await w.ok(w.as(w.ben), 'PATCH', '/v1/auth/me', { timezone: 'Europe/London' }, 200);
    const schedules = `/v1/orgs/${w.orgSlug}/schedules`;
    // "Sydney": day-long turns at 09:00 Sydney time from Saturday 4 April, Ann then Adam. Ann from
    // 4 Apr 09:00 AEDT (3 Apr 22:00Z) to 5 Apr 09:00 AEST (4 Apr 23:00Z): 25 h; Adam to 5 Apr 23:00Z: 24 h.
    await w.ok(owner(), 'POST', schedules, { name: 'Sydney', time_zone: 'Australia/Sydney', layers: [{ start: '2026-04-04T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.admin.id] }] });
    // "London": the same from Saturday 24 October, Ben then Olga (neither is on "Sydney", which goes on).
    // Ben from 24 Oct 09:00 BST (08:00Z) to 25 Oct 09:00 GMT (09:00Z): 25 h; Olga to 26 Oct 09:00Z: 24 h.
    await w.ok(owner(), 'POST', schedules, { name: 'London', time_zone: 'Europe/London', layers: [{ start: '2026-10-24T09:00', turn: { unit: 'day', length: 1 }, users: [w.ben.id, w.owner.id] }] });
    // Ann in Sydney at 11:30Z: Sat 4 Apr 22:30 AEDT (night, weekend); Sun 5 Apr 21:30 AEST (day, weekend:
    // by the summer offset it would be 22:30, night); Mon 6 Apr 21:30 (day).
    await pageAt('2026-04-04T11:30:00Z', w.ann);
    await pageAt('2026-04-05T11:30:00Z', w.ann);
    await pageAt('2026-04-06T11:30:00Z', w.ann);
    // Sydney's spring change, Sunday 4 October 2026 (02:00 AEST, +10, becomes 03:00 AEDT, +11: 16:00Z on 3
    // October). Ann at 3 Oct 12:30Z: Sat 22:30 AEST (night, weekend); at 4 Oct 20:30Z: Mon 5 Oct 07:30 AEDT
    // (day: by the winter offset it would be 06:30, night).
    w.t.clock.set('2026-10-03T00:00:00Z');
    await signInAgain(w);
    await pageAt('2026-10-03T12:30:00Z', w.ann);
    await pageAt('2026-10-04T20:30:00Z', w.ann);
    // Ben in London at 06:30Z: Sat 24 Oct 07:30 BST (day, weekend); Sun 25 Oct 06:30 GMT (night, weekend:
    // by the summer offset 07:30, day); Mon 26 Oct 06:30 (night).
    w.t.clock.set('2026-10-24T00:00:00Z');
    await signInAgain(w);
    await pageAt('2026-10-24T06:30:00Z', w.ben);
    await pageAt('2026-10-25T06:30:00Z', w.ben);
    await pageAt('2026-10-26T06:30:00Z', w.ben);
    w.t.clock.set('2026-11-01T00:00:00Z');
    await signInAgain(w);
  });
  after(() => w.close());

  test('Sydney: the 25-hour turn and night by the offset of the page’s instant', async () => {
    const r = await report('from=2026-04-03T22:00:00Z&to=2026-04-05T23:00:00Z&tz=Australia/Sydney');
    assert.deepEqual(r.rows.map(figures), [
      ['Ann Responder', 'Australia/Sydney', 25, 2, 1, 2, 2, 60],
      ['Adam Admin', 'UTC', 24, 0, 0, 0, 0, null],
    ]);
    // The third page (Monday 6 April, day) is outside that range; over the whole week it is counted, still in the day.
    const week = await report('from=2026-04-03T22:00:00Z&to=2026-04-10T22:00:00Z');
    assert.deepEqual(figures(week.rows[0]!).slice(3, 7), [3, 1, 2, 3]);
  });

  test('Sydney in spring: the 23-hour turn and night by the offset of the page’s instant', async () => {
    // Day 182 of the rotation from 4 April is Ann's: Sat 3 Oct 09:00 AEST (2 Oct 23:00Z) to Sun 4 Oct 09:00
    // AEDT (3 Oct 22:00Z), 23 h; Adam's turn after it, to 4 Oct 22:00Z, 24 h.
    const r = await report('from=2026-10-02T23:00:00Z&to=2026-10-04T22:00:00Z&tz=Australia/Sydney');
    assert.deepEqual(r.rows.map(figures), [
      ['Ann Responder', 'Australia/Sydney', 23, 2, 1, 1, 2, 60],
      ['Adam Admin', 'UTC', 24, 0, 0, 0, 0, null],
    ]);
  });

  test('London: the 25-hour turn and night by the offset of the page’s instant', async () => {
    const range = 'from=2026-10-24T06:00:00Z&to=2026-10-26T09:00:00Z&tz=Europe/London';
    const r = await report(range);
    // Ann and Adam are on "Sydney" in the range too (rows of their own, no pages): London's two only.
    const london = r.rows.filter((x) => x.user_id === w.ben.id || x.user_id === w.owner.id);
    assert.deepEqual(london.map(figures), [
      ['Ben Responder', 'Europe/London', 25, 3, 2, 2, 3, 60],
      ['Olga Owner', 'UTC', 24, 0, 0, 0, 0, null],
    ]);
    // The CSV's file name is cut in the report's zone: 24 Oct 06:00Z is 07:00 BST, 26 Oct 09:00Z 09:00 GMT.
    const csv = await w.call(owner(), 'GET', `/v1/orgs/${w.orgSlug}/reports/oncall?${range}&format=csv`);
    assert.match(String(csv.headers['content-disposition']), /oncall-2026-10-24-2026-10-26\.csv/);
  });
});
