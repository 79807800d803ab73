/// <reference lib="dom" />
// On call in the dashboard and on /field (issue #35): an admin builds a two-layer schedule in the
// dashboard, adds an override by picking a time on the timeline and a person, and sees the final
// row change; the responder's /field shows their next shift. Every page state is checked by axe-core.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ApiUser, browser, browserSuite, call, DESKTOP, noHorizontalOverflow, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

let admin: ApiUser;
let responder: ApiUser;

browserSuite({
  setUp: async () => {
    admin = await signUp(server, { name: 'Ada Admin', timezone: 'UTC' });
    responder = await signUp(server, { name: 'Rory Responder', timezone: 'UTC' });
    const added = await call(server, 'POST', `/v1/orgs/${admin.slug}/members`, { email: responder.email, role: 'member' }, admin.cookie);
    assert.equal(added.status, 201, JSON.stringify(added.body));
  },
});

const today = new Date().toISOString().slice(0, 10);

test('an admin builds a two-layer schedule, adds an override on the timeline, and the final row changes', async () => {
  const context = await signedInContext(browser, server, admin, { viewport: DESKTOP, timezoneId: 'UTC', locale: 'en-GB' });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/app/oncall`);
  await page.getByTestId('new-schedule').click();
  const form = page.getByTestId('schedule-form');
  await form.waitFor();
  await page.getByTestId('schedule-name').fill('Water network');
  await page.getByTestId('timezone-input').fill('UTC');

  // Layer 1: daily turns from today 00:00, Ada then Rory.
  const first = page.getByTestId('layer-editor').nth(0);
  await first.getByTestId('layer-name').fill('Days');
  await first.getByTestId('layer-start').fill(`${today}T00:00`);
  await first.getByTestId('layer-length').fill('1');
  await first.getByTestId('layer-unit').selectOption('day');
  for (const name of ['Ada Admin', 'Rory Responder']) {
    await first.getByTestId('layer-add-user').selectOption({ label: name });
    await first.getByTestId('layer-add-user-button').click();
  }
  // Layer 2: Rory on weekdays 09:00-17:00, winning over layer 1 there.
  await page.getByTestId('add-layer').click();
  const second = page.getByTestId('layer-editor').nth(1);
  await second.getByTestId('layer-name').fill('Office hours');
  await second.getByTestId('layer-start').fill(`${today}T00:00`);
  await second.getByTestId('layer-unit').selectOption('week');
  await second.getByTestId('layer-add-user').selectOption({ label: 'Rory Responder' });
  await second.getByTestId('layer-add-user-button').click();
  await second.getByRole('button', { name: '+ Add a time window' }).click();
  await screenshot(page, 'oncall-editor');
  await page.getByTestId('save-schedule').click();

  await page.waitForURL((url) => url.pathname === `/app/oncall/${admin.slug}/water-network`);
  const timeline = page.getByTestId('timeline');
  await timeline.waitFor();
  assert.equal(await page.getByTestId('tl-layer').count(), 2, 'a row per layer');
  const finalSegments = page.getByTestId('tl-final').locator('.tl-seg');
  await finalSegments.first().waitFor();
  const before = await finalSegments.count();
  assert.ok(before >= 14, `a shift a day or more in the final row (${before})`);
  assert.equal(await page.getByTestId('tl-overrides').locator('.tl-seg').count(), 0);
  await screenshot(page, 'oncall-schedule');

  // Pick a time on the final row (70% across: about ten days ahead), then the person.
  const track = page.getByTestId('tl-final').locator('.tl-track');
  const box = (await track.boundingBox())!;
  await track.click({ position: { x: box.width * 0.7, y: box.height / 2 } });
  assert.match(await page.getByTestId('override-start').inputValue(), /^\d{4}-\d{2}-\d{2}T\d{2}:00$/);
  await page.getByTestId('override-user').selectOption({ label: 'Ada Admin' });
  await page.getByTestId('add-override').click();

  await page.getByTestId('tl-overrides').locator('.tl-seg').first().waitFor();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="tl-final"] .tl-seg').length > n, before);
  assert.ok((await finalSegments.count()) > before, 'the override splits a shift in the final row');
  // The list of overrides is its own request, answered after or before the timeline's: wait for it.
  await page.getByTestId('override-list').locator('li').first().waitFor();
  assert.equal(await page.getByTestId('override-list').locator('li').count(), 1);
  await screenshot(page, 'oncall-override');

  await page.goto(`${server.url}/app/oncall`);
  await page.getByTestId('schedule-card').first().waitFor();
  assert.match(await page.getByTestId('schedule-card').first().innerText(), /Water network[\s\S]*Now:[\s\S]*Next:/);
  await screenshot(page, 'oncall-list');
  assert.deepEqual(errors, []);
  await context.close();
});

test('on a phone the schedule page and the list fit the screen (the timeline scrolls inside its card)', async () => {
  const context = await signedInContext(browser, server, admin, { viewport: PHONE, timezoneId: 'UTC', locale: 'en-GB' });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/app/oncall/${admin.slug}/water-network`);
  await page.getByTestId('tl-final').locator('.tl-seg').first().waitFor();
  await noHorizontalOverflow(page);
  await screenshot(page, 'oncall-schedule');
  await page.goto(`${server.url}/app/oncall`);
  await page.getByTestId('schedule-card').first().waitFor();
  await noHorizontalOverflow(page);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the responder's /field shows their next shift", async () => {
  const context = await signedInContext(browser, server, responder, { viewport: PHONE, timezoneId: 'UTC', locale: 'en-GB' });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/field`);
  const panel = page.getByTestId('oncall');
  await panel.waitFor();
  assert.match(await page.getByTestId('next-shift').innerText(), /^Next shift: Water network, .+ until .+\.$/);
  await screenshot(page, 'field-oncall');
  assert.deepEqual(errors, []);
  await context.close();
});
