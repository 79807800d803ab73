/// <reference lib="dom" />
// The public booking pages in a browser: every address form books through its own form, with slot
// times shown in the visitor's zone; a slot taken meanwhile, field errors, the pending confirmation,
// an unknown page; screenshots of each step at phone and desktop widths.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browser, browserSuite, call, DESKTOP, PHONE, screenshot, server, watchErrors } from './harness.js';
import { dayIn, fillForm, hostBookings, pickSlot, bookingWorld, timeIn, type BookingWorld } from './booking-setup.js';

let world: BookingWorld;
browserSuite({
  setUp: async () => {
    world = await bookingWorld(server);
  },
});

async function open(path: string, zone: string, viewport: { width: number; height: number } = PHONE): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ timezoneId: zone, locale: 'en-US', viewport });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(server.url + path);
  await page.getByTestId('event-name').waitFor();
  return { page, errors };
}

/** Books through the page at `path` on day `days` ahead in `zone` and checks the result through the API. */
async function bookThrough(path: string, zone: string, days: number, eventTypeId: number, shots?: string) {
  for (const viewport of shots ? [PHONE, DESKTOP] : [PHONE]) {
    const { page, errors } = await open(path, zone, viewport);
    if (shots) {
      await page.locator('[data-testid="slot"]').first().waitFor();
      await screenshot(page, `${shots}-calendar`);
    }
    if (viewport === DESKTOP) {
      await page.context().close();
      continue;
    }
    const date = dayIn(zone, days);
    const picked = await pickSlot(page, date, 2);
    // The times are the visitor's: the day's first slot is midnight there (availability is all day).
    assert.equal(picked.first.shown, '12:00 AM', `first slot of ${date} in ${zone}`);
    assert.equal(timeIn(picked.first.start, zone), '12:00 AM');
    assert.equal(picked.shown, timeIn(picked.start, zone));
    assert.equal(picked.shown, '1:00 AM');
    await page.getByTestId('booking-form').waitFor();
    if (shots) await screenshot(page, `${shots}-form`);
    const email = `guest-${days}@example.com`;
    await fillForm(page, 'Grace Guest', email, 'Looking forward to it');
    await page.getByTestId('submit').click();
    const done = page.getByTestId('confirmation');
    await done.waitFor();
    assert.equal(await page.getByTestId('confirmation-title').innerText(), 'Confirmed');
    assert.match(await page.getByTestId('confirmation-time').innerText(), /1:00 AM/);
    if (shots) await screenshot(page, `${shots}-confirmation`);
    const mine = (await hostBookings(server, world.host)).filter((b) => b.attendee_email === email);
    assert.equal(mine.length, 1);
    assert.deepEqual([mine[0]!.start_time, mine[0]!.status, mine[0]!.event_type_id, mine[0]!.timezone], [picked.start, 'confirmed', eventTypeId, zone]);
    // The manage links of the answer are on the page.
    assert.equal(await page.getByTestId('cancel-link').getAttribute('href'), mine[0]!.cancel_url);
    assert.deepEqual(errors, []);
    await page.context().close();
  }
}

test('personal page /assign/<user>/<event>: book in New York time, screenshots of each step', async () => {
  await bookThrough(`/assign/${world.host.slug}/intro`, 'America/New_York', 2, world.intro, 'booking');
});

test('personal page /book/<user>/<event> in Tokyo time', async () => {
  await bookThrough(`/book/${world.host.slug}/intro`, 'Asia/Tokyo', 4, world.intro);
});

test('team page /assign/<org>/<team>/<event>', async () => {
  await bookThrough(`/assign/${world.org}/${world.team}/support`, 'America/New_York', 6, world.support);
});

test('team page /book/<org>/<team>/<event> in Tokyo time', async () => {
  await bookThrough(`/book/${world.org}/${world.team}/support`, 'Asia/Tokyo', 8, world.support, 'booking-team');
});

test('each page posts to its own address form', async () => {
  const seen: string[] = [];
  for (const path of [`/assign/${world.host.slug}/intro`, `/book/${world.host.slug}/intro`, `/assign/${world.org}/${world.team}/support`, `/book/${world.org}/${world.team}/support`]) {
    const { page } = await open(path, 'UTC');
    page.on('request', (r) => {
      if (r.method() === 'POST') seen.push(new URL(r.url()).pathname);
    });
    await pickSlot(page, dayIn('UTC', 10 + seen.length * 2), 3);
    await fillForm(page, 'Forms Test', `forms-${seen.length}@example.com`);
    const [res] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByTestId('submit').click()]);
    assert.equal(res.status(), 201);
    assert.ok(res.request().headers()['idempotency-key'], 'an Idempotency-Key is sent');
    await page.getByTestId('confirmation').waitFor();
    await page.context().close();
  }
  assert.deepEqual(seen, [
    `/v1/assign/${world.host.slug}/intro`,
    `/v1/book/${world.host.slug}/intro`,
    `/v1/assign/${world.org}/${world.team}/support`,
    `/v1/book/${world.org}/${world.team}/support`,
  ]);
});

test('the visitor changes the time zone: the same slots are shown in the chosen zone', async () => {
  const { page } = await open(`/assign/${world.host.slug}/intro`, 'America/New_York');
  const date = dayIn('Asia/Tokyo', 20);
  await page.getByTestId('zone').selectOption('Asia/Tokyo');
  const day = page.locator(`[data-testid="day"][data-date="${date}"]`);
  if ((await day.count()) === 0) await page.getByRole('button', { name: 'Next month' }).click();
  await day.click();
  const first = page.locator('[data-testid="slot"]').first();
  await first.waitFor();
  assert.equal((await first.innerText()).trim(), '12:00 AM');
  assert.equal(timeIn((await first.getAttribute('data-start'))!, 'Asia/Tokyo'), '12:00 AM');
  await page.context().close();
});

test('field errors from 422 show next to their inputs; a slot taken meanwhile sends the visitor back to fresh times', async () => {
  const { page, errors } = await open(`/assign/${world.host.slug}/intro`, 'America/New_York', DESKTOP);
  const date = dayIn('America/New_York', 22);
  const picked = await pickSlot(page, date, 5);
  await fillForm(page, 'Eve', 'not-an-email');
  await page.getByTestId('submit').click();
  await page.getByTestId('error-attendee_email').waitFor();
  await screenshot(page, 'booking-field-error');
  // Someone else takes the slot before the visitor fixes the email.
  const taken = await call(server, 'POST', `/v1/book/${world.host.slug}/intro`, { attendee_name: 'Fast', attendee_email: 'fast@example.com', start_time: picked.start });
  assert.equal(taken.status, 201);
  await page.getByLabel('Email').fill('eve@example.com');
  await page.getByTestId('submit').click();
  await page.getByTestId('notice').waitFor();
  assert.match(await page.getByTestId('notice').innerText(), /just taken/);
  assert.equal(await page.getByTestId('selected-day').count(), 1);
  await page.locator('[data-testid="slot"]').first().waitFor();
  const starts = await page.locator('[data-testid="slot"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-start')));
  assert.ok(!starts.includes(picked.start), 'the taken slot is gone from the list');
  await screenshot(page, 'booking-slot-taken');
  assert.deepEqual(errors.filter((e) => !/status of (409|422)/.test(e)), []);
  await page.context().close();
});

test('an event type that needs confirmation: the page says pending', async () => {
  const { page } = await open(`/assign/${world.host.slug}/visit`, 'Europe/Berlin');
  await pickSlot(page, dayIn('Europe/Berlin', 24), 2);
  await fillForm(page, 'Paula Pending', 'paula@example.com');
  assert.equal(await page.getByTestId('submit').innerText(), 'Request booking');
  await page.getByTestId('submit').click();
  await page.getByTestId('confirmation').waitFor();
  assert.equal(await page.getByTestId('confirmation-title').innerText(), 'Pending: the host will confirm');
  assert.equal(await page.getByTestId('confirmation').getAttribute('data-status'), 'pending');
  await screenshot(page, 'booking-pending');
  await page.context().close();
});

test('an unknown booking page says so', async () => {
  for (const viewport of [PHONE, DESKTOP]) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    // The server answers a styled 404 page itself (issue #14 item 11), before any script runs.
    const res = await page.goto(`${server.url}/assign/${world.host.slug}/no-such-event`);
    assert.equal(res?.status(), 404);
    assert.match(await page.getByTestId('not-found').innerText(), /Page not found/);
    await screenshot(page, 'booking-not-found');
    await context.close();
  }
});
