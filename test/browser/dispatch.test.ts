/// <reference lib="dom" />
// The dispatch loop in two browsers: a dispatcher assigns the nearest responder from the
// incident's page; the responder's /field shows it at once, acknowledges, goes en route and
// resolves; the dispatcher's page shows each step on the timeline as it happens.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browser, browserSuite, DESKTOP, ok, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

const SCENE = { lat: 52.52, lng: 13.405 };

browserSuite();

test('a dispatcher assigns the nearest responder; the responder acknowledges, goes en route and resolves from /field; the timeline follows live', async () => {
  const dispatcher = await signUp(server, { name: 'Dora Dispatcher' });
  const near = await signUp(server, { name: 'Nina Near' });
  const far = await signUp(server, { name: 'Felix Far' });
  const orgs = await ok<{ orgs: { id: number; slug: string; primary: boolean }[] }>('GET', '/v1/orgs', undefined, dispatcher);
  const org = orgs.orgs.find((o) => o.primary)!;
  for (const u of [near, far]) await ok('POST', `/v1/orgs/${org.slug}/members`, { email: u.email, role: 'member' }, dispatcher);
  // Both responders beacon into the dispatcher's org: Nina about 300 m away, Felix about 5 km.
  await ok('POST', '/v1/signals', { type: 'beacon', lat: SCENE.lat + 0.0027, lng: SCENE.lng, meta: { device_id: 'dev-nina' }, org_id: org.id }, near);
  await ok('POST', '/v1/signals', { type: 'beacon', lat: SCENE.lat + 0.045, lng: SCENE.lng, meta: { device_id: 'dev-felix' }, org_id: org.id }, far);
  const incident = await ok<{ Id: number }>('POST', '/v1/tickets', { title: 'Gas leak at the bakery', priority: 'urgent', ...SCENE, org_id: org.id }, dispatcher);

  // The responder's phone, open on /field before anything is assigned.
  const phone = await signedInContext(browser, server, near, { viewport: PHONE, permissions: ['geolocation'], geolocation: { latitude: SCENE.lat + 0.001, longitude: SCENE.lng, accuracy: 8 } });
  const field = await phone.newPage();
  const fieldErrors = watchErrors(field);
  await field.goto(server.url + '/field');
  await field.waitForSelector('[data-testid="my-incidents"]');
  assert.equal(await field.locator('[data-testid="my-incident"]').count(), 0);

  // On the dispatcher's map the incident sits beside the responders; selecting it lists them
  // nearest first, and one click assigns.
  const desk = await signedInContext(browser, server, dispatcher, { viewport: DESKTOP });
  const page = await desk.newPage();
  const pageErrors = watchErrors(page);
  await page.goto(`${server.url}/app/signals`);
  await page.waitForSelector('.leaflet-marker-icon.marker-incident');
  // The responders' markers come from the devices' own request (/v1/signals/beacons), not the incidents' that drew
  // the incident's marker: wait for both of them before counting.
  await page.waitForFunction(() => document.querySelectorAll('.leaflet-marker-icon.marker-beacon').length >= 2);
  assert.equal(await page.locator('.leaflet-marker-icon.marker-beacon').count(), 2);
  await page.locator('.leaflet-marker-icon.marker-incident').click();
  await page.waitForSelector('[data-testid="selected-incident"] [data-testid="responder"]');
  const listed = await page.locator('[data-testid="selected-incident"] [data-testid="responder"] strong').allTextContents();
  assert.deepEqual(listed, ['Nina Near', 'Felix Far']);
  assert.match((await page.locator('[data-testid="responder"]').first().textContent()) ?? '', /\b\d{3} m\b/);
  await screenshot(page, 'dispatch-map');
  await page.locator('[data-testid="assign-responder"]').first().click();
  const assignedAt = Date.now();
  await page.waitForSelector('[data-testid="selected-incident"] [data-testid="responder"] >> text=Assigned');

  // On the phone it appears live (the incident stream), without a reload.
  await field.waitForSelector('[data-testid="my-incident"]', { timeout: 5000 });
  const shownAfter = Date.now() - assignedAt;
  assert.equal(await field.locator('[data-testid="my-incident-title"]').textContent(), 'Gas leak at the bakery');
  // The dispatcher follows it on the incident's page.
  assert.equal(await page.getAttribute('[data-testid="selected-incident-link"]', 'href'), `/app/incidents/${incident.Id}`);
  await page.click('[data-testid="selected-incident-link"]');
  await page.waitForSelector('[data-testid="timeline-event"][data-type="assigned"]');
  // The assignee's name arrives with the org's member list, which may load after the timeline.
  await page.waitForFunction(() => /Waiting for Nina Near/.test(document.querySelector('[data-testid="ack-state"]')?.textContent ?? ''), undefined, { timeout: 10_000 });
  await screenshot(field, 'dispatch-field-assigned');

  await field.click('[data-testid="my-ack"]');
  await page.waitForSelector('[data-testid="timeline-event"][data-type="acknowledged"]');
  await page.waitForSelector('[data-testid="ack-state"][data-acknowledged="true"]');
  await field.click('[data-testid="my-en-route"]');
  await page.waitForSelector('[data-testid="timeline-event"][data-type="en_route"]');
  assert.match((await page.locator('[data-testid="timeline-event"][data-type="en_route"]').textContent()) ?? '', /En route at 52\.52/);
  // Issue 33: after a reload the phone still shows the marks (read from the incident's timeline).
  await field.waitForSelector('[data-testid="queue-count"]', { state: 'detached' });
  await field.reload();
  await field.waitForSelector('[data-testid="my-en-route"]:disabled');
  assert.equal((await field.textContent('[data-testid="my-en-route"]'))?.trim(), 'En route ✓');
  assert.equal(await field.isEnabled('[data-testid="my-on-scene"]'), true, 'not on scene yet');
  await field.fill('[data-testid="my-note"]', 'Gas main closed');
  await field.press('[data-testid="my-note"]', 'Enter');
  await page.waitForSelector('[data-testid="timeline-event"][data-type="signal"]');
  // Resolve asks once: "Not yet" changes nothing; "Yes, resolve it" resolves.
  await field.click('[data-testid="my-resolve"]');
  await field.waitForSelector('[data-testid="my-resolve-ask"]');
  await screenshot(field, 'dispatch-field-resolve-ask');
  await field.setViewportSize(DESKTOP);
  await screenshot(field, 'dispatch-field-resolve-ask');
  await field.setViewportSize(PHONE);
  await field.click('[data-testid="my-resolve-cancel"]');
  await field.waitForSelector('[data-testid="my-resolve-ask"]', { state: 'detached' });
  assert.equal((await ok<{ status: string }>('GET', `/v1/tickets/${incident.Id}`, undefined, dispatcher)).status, 'in_progress');
  await field.click('[data-testid="my-resolve"]');
  await field.click('[data-testid="my-resolve-confirm"]');
  await page.waitForSelector('[data-testid="timeline-event"][data-type="status_changed"] >> text=Resolved');
  await field.waitForSelector('[data-testid="my-incident"]', { state: 'detached' });
  await screenshot(page, 'dispatch-timeline');
  await screenshot(field, 'dispatch-field-done');

  const types = await page.locator('[data-testid="timeline-event"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-type')));
  assert.deepEqual(types, ['created', 'assigned', 'acknowledged', 'status_changed', 'en_route', 'signal', 'status_changed']);
  // A new alert anywhere in the org raises the banner on the dispatcher's page (it opened an incident).
  await ok('POST', '/v1/signals', { type: 'alert', note: 'Felix: second leak on Main St', lat: SCENE.lat + 0.045, lng: SCENE.lng, org_id: org.id }, far);
  await page.waitForSelector('[data-testid="alert-banner"] >> text=Felix: second leak on Main St');
  await screenshot(page, 'dispatch-alert-banner');
  assert.deepEqual(fieldErrors, []);
  assert.deepEqual(pageErrors, []);
  console.log(`# the assignment reached /field after ${shownAfter} ms`);
  await phone.close();
  await desk.close();
});
