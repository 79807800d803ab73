/// <reference lib="dom" />
// The incident status page keeps itself current through /status.js (polling): a public reply and a
// status change appear without a reload; an internal reply never does; the page names the org.
// Screenshots at both widths.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ApiUser, browser, browserSuite, call, DESKTOP, PHONE, screenshot, server, signUp, watchErrors } from './harness.js';

let user: ApiUser;
browserSuite({
  setUp: async () => {
    user = await signUp(server, { name: 'Dana Dispatcher' });
  },
});

interface Incident {
  /** Spelled `Id` on incidents, as the specification names it. */
  Id: number;
  customer_status_url: string;
}

async function reply(id: number, body: string, isPublic: boolean) {
  const r = await call(server, 'POST', `/v1/incidents/${id}/replies`, { body, public: isPublic }, user.cookie);
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

test('public replies and status changes appear live; internal replies never do', async () => {
  const created = await call<Incident>(server, 'POST', '/v1/incidents', { title: 'Water outage on Harbour Street', priority: 'high' }, user.cookie);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const incident = created.body;
  await reply(incident.Id, 'We are aware of the outage and a crew is on the way.', true);

  const context = await browser.newContext({ viewport: PHONE, timezoneId: 'Europe/Berlin', locale: 'en-US' });
  const page = await context.newPage();
  const errors = watchErrors(page);
  // ?poll=2: the test's poll interval (the page polls every 15 s by default).
  await page.goto(`${incident.customer_status_url}?poll=2`);
  await page.getByText('a crew is on the way').waitFor();
  assert.equal(await page.locator('#status').innerText(), 'Open');
  // The organization handling it is named, by its name only (issue 33): here the user's own.
  assert.equal(await page.getByTestId('status-org').innerText(), 'Dana Dispatcher');
  assert.match(await page.title(), /Water outage on Harbour Street · Dana Dispatcher status/);
  await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));

  await reply(incident.Id, 'INTERNAL: pipe burst near number 12, ask Joe for the valve key', false);
  await reply(incident.Id, 'The damaged pipe has been found.\nRepairs start at 14:00.', true);
  const patched = await call(server, 'PATCH', `/v1/incidents/${incident.Id}`, { status: 'in_progress' }, user.cookie);
  assert.equal(patched.status, 200);

  await page.getByText('The damaged pipe has been found.').waitFor();
  await page.waitForFunction(() => document.getElementById('status')?.textContent === 'In progress');
  assert.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 42, 'no reload happened');
  assert.equal(await page.locator('[data-testid="reply"]').count(), 2);
  const text = await page.locator('main').innerText();
  assert.ok(!text.includes('INTERNAL'), 'the internal reply is not shown');
  assert.ok(!text.includes('valve key'));
  await screenshot(page, 'status-page');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'status-page');
  assert.deepEqual(errors, []);
  await context.close();
});

test('reply text is shown as text, never as HTML', async () => {
  const created = await call<Incident>(server, 'POST', '/v1/incidents', { title: '<b>Bold</b> title' }, user.cookie);
  const incident = created.body;
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${incident.customer_status_url}?poll=2`);
  await page.getByText('No updates yet.').waitFor();
  await reply(incident.Id, '<img src=x id=injected> hello', true);
  await page.getByText('<img src=x id=injected> hello').waitFor();
  assert.equal(await page.locator('#injected').count(), 0);
  assert.equal(await page.locator('#title').innerText(), '<b>Bold</b> title');
  await context.close();
});
