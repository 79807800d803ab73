/// <reference lib="dom" />
// Heartbeats, the event log and maintenance windows in the pages (issue #37): an admin makes a
// heartbeat on the Integrations page (its URL shown once), a ping turns it from "waiting" to "Up"
// with its last ping; the event log shows what an integration received and what came of it; a
// maintenance window planned there shows as a banner on the incidents page, and an alert during it
// opens nothing (logged "Suppressed"). Every page state is checked by axe-core.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ApiUser, browser, browserSuite, DESKTOP, noHorizontalOverflow, ok, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

let admin: ApiUser;
let org: { id: number; slug: string };

browserSuite({
  setUp: async () => {
    admin = await signUp(server, { name: 'Ada Admin', timezone: 'UTC' });
    await ok('PATCH', `/v1/users/${admin.id}`, { plan: 'agency' }, admin);
    org = await ok<{ id: number; slug: string }>('POST', '/v1/orgs', { name: 'Water Board' }, admin);
  },
});

const alert = (fingerprint: string) => ({
  version: '4',
  status: 'firing',
  receiver: 'muster',
  groupLabels: {},
  commonLabels: {},
  commonAnnotations: {},
  externalURL: 'http://alertmanager.example.com',
  alerts: [{ status: 'firing', labels: { alertname: 'PumpDown', severity: 'critical' }, annotations: { summary: 'Pump 3 stopped' }, startsAt: new Date().toISOString(), fingerprint }],
});

test('a heartbeat made on the page goes up with its first ping; the event log and a maintenance window, with its banner on the incidents page', async () => {
  const context = await signedInContext(browser, server, admin, { viewport: DESKTOP, timezoneId: 'UTC', locale: 'en-GB' });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/app/integrations`);
  await page.getByTestId('integration-org').selectOption({ label: 'Water Board' });
  await page.fill('#integration-name', 'Nightly backup');
  await page.getByTestId('integration-type').selectOption('heartbeat');
  await page.getByTestId('integration-interval').fill('3600');
  await screenshot(page, 'heartbeat-form');
  await page.getByTestId('integration-submit').click();
  await page.getByTestId('integration-created').waitFor();
  const heartbeatUrl = ((await page.getByTestId('integration-heartbeat_url').textContent()) ?? '').trim();
  assert.match(heartbeatUrl, /\/v1\/integrations\/[A-Za-z0-9_-]+\/heartbeat$/);
  await page.getByTestId('integration-saved').click();
  const row = page.getByTestId('integration-row').filter({ hasText: 'Nightly backup' });
  await row.getByTestId('heartbeat-state').waitFor();
  assert.equal(await row.getByTestId('heartbeat-state').getAttribute('data-status'), 'new');
  assert.match(await row.getByTestId('heartbeat-state').innerText(), /^Waiting for the first ping\s+never pinged · every 1 h, 1 min grace$/);

  // The backup job pings it.
  const pinged = await fetch(heartbeatUrl, { method: 'POST', body: 'done' });
  assert.equal(pinged.status, 200);
  await page.reload();
  const state = page.getByTestId('integration-row').filter({ hasText: 'Nightly backup' }).getByTestId('heartbeat-state');
  await state.waitFor();
  assert.equal(await state.getAttribute('data-status'), 'up');
  assert.match(await state.innerText(), /^Up\s+last ping/);
  await screenshot(page, 'heartbeat-up');

  // An alerts integration and what it received, in its event log.
  const created = await ok<{ id: number; alertmanager_url: string }>('POST', '/v1/integrations', { name: 'Prometheus', org_id: org.id }, admin);
  assert.equal((await fetch(created.alertmanager_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alert('fp-before')) })).status, 200);
  assert.equal((await fetch(created.alertmanager_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"alerts":[]}' })).status, 422);

  // A maintenance window, planned on the page, for Prometheus only.
  await page.reload();
  const windows = page.getByRole('region', { name: 'Maintenance windows · Water Board' });
  await windows.waitFor();
  await windows.getByTestId('maintenance-description').fill('Pump station rebuild');
  await windows.getByRole('checkbox', { name: 'Prometheus' }).check();
  await windows.getByTestId('maintenance-submit').click();
  const planned = windows.getByTestId('maintenance-window');
  await planned.waitFor();
  assert.equal(await planned.getAttribute('data-active'), 'true');
  assert.match(await planned.innerText(), /Pump station rebuild · Prometheus/);
  // An alert during it: answered, nothing opened.
  const during = await fetch(created.alertmanager_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alert('fp-during')) });
  assert.deepEqual(((await during.json()) as { alerts: { action: string }[] }).alerts.map((a) => a.action), ['suppressed']);
  const prometheus = page.getByTestId('integration-row').filter({ hasText: 'Prometheus' });
  await prometheus.getByTestId('integration-log-toggle').click();
  await prometheus.getByTestId('event-log-entry').nth(2).waitFor();
  assert.deepEqual(await prometheus.getByTestId('event-log-entry').evaluateAll((els) => els.map((e) => e.getAttribute('data-outcome'))), ['suppressed', 'rejected', 'opened']);
  assert.match(await prometheus.getByTestId('event-log-entry').nth(1).innerText(), /'alerts' must NOT have fewer than 1 items/);
  await screenshot(page, 'integration-event-log');

  // The incidents page says so.
  await page.goto(`${server.url}/app/incidents`);
  const banner = page.getByTestId('maintenance-banner');
  await banner.waitFor();
  assert.match(await banner.innerText(), /Maintenance in Water Board until .*: Pump station rebuild\. 1 of its integrations open no incidents and page nobody/);
  await page.getByText('Pump 3 stopped').first().waitFor();
  assert.equal(await page.getByText('Pump 3 stopped').count(), 1, 'the alert from before the window, not the one during it');
  await screenshot(page, 'maintenance-banner');

  // Ended early from the integrations page: the banner goes.
  await page.goto(`${server.url}/app/integrations`);
  const board = page.getByRole('region', { name: 'Maintenance windows · Water Board' });
  await board.getByTestId('maintenance-window-end').click();
  await board.getByText('No window planned').waitFor();
  await page.goto(`${server.url}/app/incidents`);
  // The windows read (the banners' box is there once they are, empty or not), and none active.
  await page.locator('[data-testid="maintenance-banners"]').waitFor({ state: 'attached' });
  assert.equal(await page.getByTestId('maintenance-banners').getAttribute('data-count'), '0');
  assert.equal(await page.getByTestId('maintenance-banner').count(), 0);
  // The refused alert (422) was the test's own; nothing in the pages failed.
  assert.deepEqual(errors, []);
  await context.close();
});

test('the integrations page with a heartbeat fits a phone', async () => {
  const context = await signedInContext(browser, server, admin, { viewport: PHONE, timezoneId: 'UTC' });
  const page = await context.newPage();
  await page.goto(`${server.url}/app/integrations`);
  await page.getByTestId('heartbeat-state').first().waitFor();
  await noHorizontalOverflow(page);
  await screenshot(page, 'heartbeat-list');
  await context.close();
});
