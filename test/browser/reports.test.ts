/// <reference lib="dom" />
// The dashboard's Reports page (issue #39, docs/web.md "Reports"): an org's incident report drawn
// as charts and a table with the numbers the API computed, the grouping switched (a new request,
// a new table), the CSV downloads, the per-person on-call table (or its plain notice on a server
// without the on-call report), and the page kept from members. Screenshots at both widths.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { type ApiUser, browser, browserSuite, call, DESKTOP, noHorizontalOverflow, ok, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

let owner: ApiUser;
let member: ApiUser;
let orgId: number;
const slug = 'report-ops';
const ZONE = 'Europe/Berlin';
/** Before this file's server answered anything: no answer it gives can be of an earlier instant. */
const opened = Date.now();

browserSuite({
  setUp: async () => {
    // The first user of an instance is its admin: it may give itself the plan a second org needs.
    owner = await signUp(server, { name: 'Rhea Reporter', timezone: ZONE });
    await ok('PATCH', `/v1/users/${owner.id}`, { plan: 'enterprise' }, owner);
    member = await signUp(server, { name: 'Milo Member' });
    orgId = (await ok<{ id: number }>('POST', '/v1/orgs', { name: 'Report Ops', slug }, owner)).id;
    await ok('POST', `/v1/orgs/${slug}/members`, { email: member.email, role: 'member' }, owner);
    // Four incidents: two urgent, one high, one low; two acknowledged, one of them resolved (well within its SLA).
    const open = async (title: string, priority: string) => (await ok<{ Id: number }>('POST', '/v1/tickets', { title, priority, org_id: orgId }, owner)).Id;
    const a = await open('Pump station offline', 'urgent');
    const b = await open('Sensor drift at the weir', 'high');
    await open('Fence damaged', 'low');
    await open('Main burst on Hill Road', 'urgent');
    // The owner is paged by hand for both before acknowledging them (the per-person table, where the server has it).
    for (const id of [a, b]) await ok('POST', `/v1/tickets/${id}/page`, { user_ids: [owner.id] }, owner);
    await ok('POST', `/v1/tickets/${a}/acknowledge`, {}, owner, 200);
    await ok('POST', `/v1/tickets/${b}/acknowledge`, {}, owner, 200);
    await ok('PATCH', `/v1/tickets/${a}`, { status: 'resolved' }, owner);
  },
});

const cells = (page: Page, table: string, col: string) =>
  page.$$eval(`[data-testid="${table}"] tbody td[data-col="${col}"]`, (tds) => tds.map((td) => td.textContent ?? ''));

for (const [kind, viewport] of [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const) {
  test(`an owner reads the incident report as charts and a table, switches the grouping and downloads the CSV (${kind})`, async () => {
    const context = await signedInContext(browser, server, owner, { viewport, timezoneId: ZONE, acceptDownloads: true });
    const page = await context.newPage();
    const errors = watchErrors(page);
    const asked: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/reports/')) asked.push(r.url());
    });

    // The navigation leads there: /app/reports opens the org administered (the shared one before the personal one).
    await page.goto(`${server.url}/app/incidents`);
    if (kind === 'phone') await page.click('.menu-button');
    await page.click('a.nav-link[href="/app/reports"]');
    await page.waitForURL(`**/app/reports/${slug}`);
    await page.waitForSelector('[data-testid="incident-table"] tbody tr');
    await page.waitForSelector('#chart-incidents svg.chart-svg .bar', { state: 'attached' });

    // Last 30 days by day, in the browser's zone: 30 rows and 30 bars, the four incidents among them.
    const first = new URL(asked.find((u) => u.includes('/reports/incidents'))!);
    assert.equal(first.searchParams.get('group_by'), 'day');
    assert.equal(first.searchParams.get('tz'), ZONE);
    assert.equal(await page.getAttribute('[data-preset="30d"]', 'aria-pressed'), 'true');
    const perDay = (await cells(page, 'incident-table', 'incidents')).map(Number);
    assert.equal(perDay.length, 30);
    assert.equal(perDay.reduce((s, n) => s + n, 0), 4);
    const bars = await page.$$eval('#chart-incidents .bar', (gs) => gs.map((g) => Number(g.getAttribute('data-value'))));
    assert.deepEqual(bars, perDay, 'a bar per day with the table\'s count');
    assert.equal(await page.getAttribute('#chart-incidents svg.chart-svg', 'data-points'), '30');
    // The chart's own table (for screen readers) carries the same counts.
    const hidden = await page.$$eval('#chart-incidents .sr-only table tbody tr td:nth-of-type(1)', (tds) => tds.map((td) => Number(td.textContent)));
    assert.deepEqual(hidden, perDay);
    const totals: Record<string, string | null> = await page.$$eval('[data-testid="report-totals"] .stat', (ds) =>
      Object.fromEntries(ds.map((d) => [d.getAttribute('data-stat') ?? '', d.querySelector('dd')?.textContent ?? null])),
    );
    assert.equal(totals.incidents, '4');
    assert.equal(totals.acknowledged, '2');
    assert.equal(totals.resolved, '1');
    assert.equal(totals.sla, '100 %');
    // When the figures are of (the answer's as_of: computed for this request, or stored by this file's
    // earlier one: between this file's start and now).
    const asOf = Date.parse((await page.getAttribute('[data-testid="report-as-of"] time', 'datetime')) ?? '');
    assert.ok(asOf >= opened && asOf <= Date.now(), `as_of ${new Date(asOf).toISOString()}`);
    assert.equal(await page.textContent('[data-testid="incident-table"] tfoot td[data-col="incidents"]'), '4');
    // MTTA and MTTR: the line chart has a marker for the day with acknowledged incidents.
    assert.ok((await page.$$('#chart-times .line circle')).length >= 1);
    await page.waitForLoadState('networkidle').catch(() => undefined);
    await screenshot(page, 'reports-by-day');
    await noHorizontalOverflow(page);

    // The per-person on-call table.
    const oncall = await call(server, 'GET', `/v1/orgs/${slug}/reports/oncall?from=${encodeURIComponent(first.searchParams.get('from')!)}&to=${encodeURIComponent(first.searchParams.get('to')!)}`, undefined, owner.cookie);
    assert.equal(oncall.status, 200, JSON.stringify(oncall.body));
    await page.waitForSelector('[data-testid="oncall-table"]');
    const rows = await page.$$eval('[data-testid="oncall-table"] tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-user')));
    assert.deepEqual(rows, [String(owner.id)], 'the one person paged');
    const row = `[data-testid="oncall-table"] tbody tr[data-user="${owner.id}"]`;
    assert.equal(await page.textContent(`${row} td[data-col="pages"]`), '2');
    assert.equal(await page.textContent(`${row} td[data-col="acknowledged"]`), '2');
    assert.equal(await page.textContent('[data-testid="oncall-table"] tfoot td[data-col="pages"]'), '2');

    // Grouping by priority: one more request (the incidents only), the table and the address follow.
    const before = asked.length;
    const request = page.waitForRequest((r) => r.url().includes('/reports/incidents') && r.url().includes('group_by=priority'));
    await page.selectOption('[data-testid="report-group"]', 'priority');
    await request;
    await page.waitForSelector('[data-testid="incident-report"][data-group="priority"]');
    assert.deepEqual(
      asked.slice(before).map((u) => new URL(u).pathname.split('/').pop()),
      ['incidents'],
      'the on-call report does not depend on the grouping',
    );
    assert.match(page.url(), /[?&]group=priority/);
    const names = await page.$$eval('[data-testid="incident-table"] tbody th', (ths) => ths.map((th) => th.textContent));
    assert.deepEqual(names, ['Urgent', 'High', 'Low']);
    assert.deepEqual(await cells(page, 'incident-table', 'incidents'), ['2', '1', '1']);
    assert.deepEqual(await cells(page, 'incident-table', 'sla'), ['100 %', '–', '–']);
    assert.equal(await page.getAttribute('#chart-incidents svg.chart-svg', 'data-points'), '3');
    // Groups are not a time line: the MTTA markers stand alone, with no line joining them.
    assert.equal(await page.$$eval('#chart-times .line path', (ps) => ps.length), 0);
    await screenshot(page, 'reports-by-priority');
    await noHorizontalOverflow(page);

    // The CSV link carries the same question; the session cookie authenticates it.
    const href = (await page.getAttribute('[data-testid="incident-csv"]', 'href'))!;
    const csvUrl = new URL(href, server.url);
    assert.equal(csvUrl.searchParams.get('format'), 'csv');
    assert.equal(csvUrl.searchParams.get('group_by'), 'priority');
    assert.equal(csvUrl.searchParams.get('tz'), ZONE);
    const res = await fetch(csvUrl, { headers: { cookie: owner.cookie } });
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    if (kind === 'desktop') {
      const download = page.waitForEvent('download');
      await page.click('[data-testid="incident-csv"]');
      const file = await (await download).path();
      const lines = fs.readFileSync(file, 'utf8').split('\r\n');
      assert.match(lines[0]!, /^key,label,incidents,acknowledged,resolved,mtta_p50_seconds/);
      assert.match(lines[1]!, /^urgent,urgent,2,/);
      assert.match(lines.find((l) => l.startsWith('total,'))!, /^total,,4,2,1,/);
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('a member sees no Reports link for an org they only belong to, and the page says reports are for admins and owners', async () => {
  const context = await signedInContext(browser, server, member, { viewport: DESKTOP });
  // The sidebar's switcher narrowed to the shared org (members own only their personal org).
  await context.addInitScript((id) => localStorage.setItem('muster-dashboard-org', String(id)), orgId);
  const page = await context.newPage();
  await page.goto(`${server.url}/app/incidents`);
  await page.waitForSelector('a.nav-link[href="/app/orgs"]');
  assert.equal(await page.$('a.nav-link[href="/app/reports"]'), null);
  await page.goto(`${server.url}/app/reports/${slug}`);
  await page.waitForSelector('text=Reports of an organization are for its admins and owners.');
  await context.close();
});
