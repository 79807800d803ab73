/// <reference lib="dom" />
// Issue 20, "The dispatcher": the incidents list (search, sort, assignee and source filters,
// counts per status, bulk status change), the incident page (source, saved changes), form errors in
// plain words with the field highlighted, and the searchable time zone list; at 390 and 1280 px.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browser, browserSuite, DESKTOP, ok, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

browserSuite();

async function noSideways(page: Page) {
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(wide <= 0, `the page scrolls sideways by ${wide}px`);
}

/** Waits until the list shows exactly these incidents (in any order). */
const showsTitles = (page: Page, titles: string[]) =>
  page.waitForFunction(
    (want) => {
      const have = Array.from(document.querySelectorAll('[data-testid="incident-row"] .list-title')).map((e) => e.textContent).sort();
      return JSON.stringify(have) === JSON.stringify(want);
    },
    [...titles].sort(),
  );
const count = (page: Page, status: string) => page.locator(`.status-tab[data-status="${status}"] .count`).innerText();

for (const [width, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
  test(`incidents list: search, sort, filters, counts and bulk status change (${width})`, async () => {
    const dispatcher = await signUp(server, { name: 'Dana Dispatch' });
    await ok('POST', '/v1/tickets', { title: 'Fallen tree on Elm Road', priority: 'low' }, dispatcher);
    await ok('POST', '/v1/tickets', { title: 'Gas leak at the school', priority: 'urgent', source: 'webhook' }, dispatcher);
    const water = await ok<{ Id: number }>('POST', '/v1/tickets', { title: 'Water main burst', priority: 'high', source: 'email', source_ref: 'MAIL-77' }, dispatcher);
    await ok('PATCH', `/v1/tickets/${water.Id}`, { status: 'resolved' }, dispatcher);
    const mine = await ok<{ Id: number }>('POST', '/v1/tickets', { title: 'Broken street light', description: 'Near the gas station' }, dispatcher);
    await ok('PATCH', `/v1/tickets/${mine.Id}`, { assignee_id: dispatcher.id }, dispatcher);

    const context = await signedInContext(browser, server, dispatcher, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/app/incidents`);
    await page.waitForSelector('[data-testid="incident-row"]');
    await page.waitForSelector('.status-tab .count');
    assert.equal(await count(page, 'all'), '4');
    assert.equal(await count(page, 'open'), '3');
    assert.equal(await count(page, 'resolved'), '1');
    await noSideways(page);
    await screenshot(page, 'console-incidents');

    // Search: title, description and reference, as typed. Each step waits for the rows it expects by title: a wait on
    // the row count alone passed on the previous filter's rows when both happened to hold one incident.
    const all = ['Fallen tree on Elm Road', 'Gas leak at the school', 'Water main burst', 'Broken street light'];
    await page.getByTestId('incident-search').fill('gas');
    await page.waitForURL(/q=gas/);
    await showsTitles(page, ['Gas leak at the school', 'Broken street light']);
    assert.equal(await count(page, 'all'), '2', 'the counts follow the search');
    await page.getByTestId('incident-search').fill('mail-77');
    await showsTitles(page, ['Water main burst']);
    await page.getByTestId('incident-search').fill('');
    await showsTitles(page, all);

    // Sort by priority: urgent first.
    await page.getByLabel('Sort').selectOption('priority');
    await page.waitForURL(/sort=priority/);
    await page.waitForFunction(() => document.querySelector('[data-testid="incident-row"] .list-title')?.textContent === 'Gas leak at the school');
    // Assignee: unassigned, then mine.
    await page.getByLabel('Assignee').selectOption('unassigned');
    await showsTitles(page, ['Fallen tree on Elm Road', 'Gas leak at the school', 'Water main burst']);
    await page.getByLabel('Assignee').selectOption('mine');
    await showsTitles(page, ['Broken street light']);
    await page.getByLabel('Assignee').selectOption('');
    await showsTitles(page, all);
    // Source.
    await page.getByLabel('Source').selectOption('email');
    await showsTitles(page, ['Water main burst']);
    await page.getByLabel('Source').selectOption('');
    await showsTitles(page, all);

    // Status tab, then a bulk change of two open incidents to closed.
    await page.locator('.status-tab[data-status="open"]').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="incident-row"]').length === 3);
    await page.getByTestId('incident-check').nth(0).check();
    await page.getByTestId('incident-check').nth(1).check();
    await page.getByTestId('bulk-status').selectOption('closed');
    await screenshot(page, 'console-bulk');
    await page.getByTestId('bulk-apply').click();
    await page.getByTestId('bulk-result').waitFor();
    assert.equal(await page.getByTestId('bulk-result').innerText(), '2 incidents changed.');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="incident-row"]').length === 1);
    await page.waitForFunction(() => document.querySelector('.status-tab[data-status="closed"] .count')?.textContent === '2');
    assert.equal(await count(page, 'open'), '1');
    const closed = await ok<{ total: number }>('GET', '/v1/tickets?status=closed', undefined, dispatcher);
    assert.equal(closed.total, 2);
    await noSideways(page);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test(`the list reads itself again when its stream says events were missed (resync) (${width})`, async () => {
    const dispatcher = await signUp(server, { name: 'Rita Resync' });
    await ok('POST', '/v1/tickets', { title: 'Seen at load' }, dispatcher);
    const context = await signedInContext(browser, server, dispatcher, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    // The test answers the incident stream: a first stream that ends at once (the browser reconnects), and on the
    // reconnection, once an incident was created meanwhile (no live event reaches the page), the server's resync.
    let calls = 0;
    let reconnected!: () => void;
    const reconnecting = new Promise<void>((resolve) => (reconnected = resolve));
    let created!: () => void;
    const missed = new Promise<void>((resolve) => (created = resolve));
    await page.route('**/v1/incidents/stream', async (route) => {
      calls += 1;
      if (calls === 1) return route.fulfill({ status: 200, contentType: 'text/event-stream', body: 'retry: 100\ndata: {"type":"connected"}\n\n' });
      reconnected();
      await missed;
      return route.fulfill({ status: 200, contentType: 'text/event-stream', body: 'retry: 600000\nid: 9\ndata: {"type":"resync"}\n\n' });
    });
    await page.goto(`${server.url}/app/incidents`);
    await showsTitles(page, ['Seen at load']);
    await reconnecting;
    await ok('POST', '/v1/tickets', { title: 'Created while away' }, dispatcher);
    created();
    await showsTitles(page, ['Seen at load', 'Created while away']);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test(`incident page: made in the dashboard says so; saved changes say so (${width})`, async () => {
    const dispatcher = await signUp(server, { name: 'Sam Saved' });
    const context = await signedInContext(browser, server, dispatcher, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/app/incidents?new=1`);
    await page.getByLabel('Title').fill('Flooded underpass');
    await page.getByRole('button', { name: 'Create incident' }).click();
    await page.waitForURL(/\/app\/incidents\/\d+$/);
    assert.equal(await page.getByTestId('incident-source').innerText(), 'Dashboard');
    await page.waitForSelector('[data-testid="timeline-event"][data-type="created"]');
    assert.match(await page.locator('[data-testid="timeline-event"][data-type="created"]').innerText(), /from Dashboard/);
    await page.getByTestId('status-select').selectOption('in_progress');
    await page.getByTestId('saved-note').waitFor();
    assert.equal(await page.getByTestId('saved-note').innerText(), 'Saved: status in progress.');
    await page.locator('#inc-assignee option', { hasText: 'Sam Saved' }).waitFor({ state: 'attached' });
    await page.getByTestId('assignee-select').selectOption(String(dispatcher.id));
    await page.getByTestId('dispatch-saved').waitFor();
    assert.equal(await page.getByTestId('dispatch-saved').innerText(), 'Saved: assigned to Sam Saved.');
    await noSideways(page);
    await screenshot(page, 'console-incident');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test(`form errors name and highlight their field in plain words; time zones from a searchable list (${width})`, async () => {
    const user = await signUp(server, { name: 'Fay Form' });
    const context = await signedInContext(browser, server, user, { viewport });
    const page = await context.newPage();
    await page.goto(`${server.url}/app/settings`);
    const tz = page.locator('#p-tz');
    await tz.waitFor();
    // The list holds every zone; the page flags a value outside it at once.
    const zones = await page.locator('#p-tz-zones option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    assert.ok(zones.includes('Europe/Berlin') && zones.includes('America/New_York') && zones.length > 300, `${zones.length} zones`);
    await tz.fill('Mars/Olympus');
    await page.getByTestId('timezone-hint').waitFor();
    await page.getByRole('button', { name: 'Save profile' }).click();
    const alert = page.locator('form:has(#p-tz) [data-testid="form-error"]');
    await alert.waitFor();
    const text = await alert.innerText();
    assert.match(text, /Time zone/);
    assert.doesNotMatch(text, /must match|format "/);
    await page.waitForFunction(() => document.querySelector('#p-tz')?.getAttribute('aria-invalid') === 'true');
    assert.equal(await page.locator('#p-name').getAttribute('aria-invalid'), null);
    const tzError = await page.locator('#err-timezone').innerText();
    assert.match(tzError, /Choose a time zone from the list/);
    // The phone has its own form ("How you are paged"): its error names and marks it alone.
    await page.locator('#p-phone').fill('12345');
    await page.getByTestId('phone-send').click();
    const phoneAlert = page.locator('[data-testid="phone-form"] [data-testid="form-error"]');
    await phoneAlert.waitFor();
    assert.match(await phoneAlert.innerText(), /Phone/);
    await page.waitForFunction(() => document.querySelector('#p-phone')?.getAttribute('aria-invalid') === 'true');
    assert.match(await page.locator('#err-phone').innerText(), /country code/);
    assert.equal(await page.locator('#p-tz').getAttribute('aria-invalid'), 'true');
    await screenshot(page, 'console-form-errors');
    // Fixed: saved, and the fields are no longer marked.
    await tz.fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByTestId('profile-saved').waitFor();
    assert.equal(await page.locator('#p-tz').getAttribute('aria-invalid'), null);
    const me = await ok<{ timezone: string }>('GET', '/v1/auth/me', undefined, user);
    assert.equal(me.timezone, 'Europe/Berlin');
    await noSideways(page);
    await context.close();
  });
}
