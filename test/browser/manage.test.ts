/// <reference lib="dom" />
// The attendee's management page (cancel_url / reschedule_url): reschedule to another slot, then
// cancel, each checked through the API; the host's confirm and decline pages; screenshots.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { browser, browserSuite, call, DESKTOP, PHONE, screenshot, server, watchErrors } from './harness.js';
import { dayIn, pickSlot, bookingWorld, timeIn, type Booking, type BookingWorld } from './booking-setup.js';

let world: BookingWorld;
browserSuite({
  setUp: async () => {
    world = await bookingWorld(server);
  },
});

/** A booking made through the public API at the `index`th slot of day `days` ahead (UTC). */
async function book(slug: string, days: number, index: number, email: string): Promise<Booking> {
  const date = dayIn('UTC', days);
  const slots = await call<{ slots: { start_time: string }[] }>(server, 'GET', `/v1/slots/${world.host.slug}/${slug}?date=${date}&timezone=UTC`);
  const res = await call<Booking>(server, 'POST', `/v1/book/${world.host.slug}/${slug}`, {
    attendee_name: 'Max Manage',
    attendee_email: email,
    start_time: slots.body.slots[index]!.start_time,
    timezone: 'Europe/Berlin',
    notes: 'Gate code 4711',
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}
const viewOf = async (b: Booking) => (await call<Booking>(server, 'GET', new URL(b.cancel_url).pathname.replace('/bookings/manage/', '/v1/bookings/manage/'))).body;

async function open(url: string, zone: string, viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ timezoneId: zone, locale: 'en-US', viewport });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(url);
  await page.getByTestId('manage').waitFor();
  return { page, errors };
}

test('reschedule_url: pick another slot, confirm it, the booking moves', async () => {
  const b = await book('intro', 3, 4, 'max@example.com');
  const { page, errors } = await open(b.reschedule_url, 'Europe/Berlin', PHONE);
  assert.equal(await page.getByTestId('status').innerText(), 'Confirmed');
  assert.match(await page.getByTestId('booking-time').innerText(), new RegExp(timeIn(b.start_time, 'Europe/Berlin')));
  // ?action=reschedule opens the picker at once.
  await page.getByTestId('reschedule-picker').waitFor();
  await page.locator('[data-testid="slot"]').first().waitFor();
  await screenshot(page, 'manage-reschedule');
  const target = dayIn('Europe/Berlin', 5);
  const picked = await pickSlot(page, target, 6);
  assert.equal(picked.shown, timeIn(picked.start, 'Europe/Berlin'));
  await page.getByTestId('confirm-move').waitFor();
  await screenshot(page, 'manage-confirm-move');
  await page.getByTestId('confirm-move-button').click();
  await page.getByTestId('flash').waitFor();
  assert.match(await page.getByTestId('booking-time').innerText(), new RegExp(picked.shown));
  const after = await viewOf(b);
  assert.deepEqual([after.id, after.start_time, after.status], [b.id, picked.start, 'confirmed']);
  await screenshot(page, 'manage-moved');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('cancel_url: a confirm step with an optional reason, then the cancelled state', async () => {
  const b = await book('intro', 7, 4, 'cancel-me@example.com');
  for (const viewport of [DESKTOP, PHONE]) {
    const { page } = await open(b.cancel_url.replace('?action=cancel', ''), 'America/New_York', viewport);
    await page.getByTestId('cancel').waitFor();
    await screenshot(page, 'manage-view');
    await page.context().close();
  }
  const { page, errors } = await open(b.cancel_url, 'America/New_York', PHONE);
  // ?action=cancel opens the confirm step; nothing is cancelled until it is confirmed.
  await page.getByTestId('cancel-form').waitFor();
  await screenshot(page, 'manage-cancel');
  assert.equal((await viewOf(b)).status, 'confirmed');
  await page.getByLabel(/Reason/).fill('Something came up');
  await page.getByTestId('confirm-cancel').click();
  await page.getByTestId('cancelled-note').waitFor();
  assert.equal(await page.getByTestId('status').innerText(), 'Cancelled');
  assert.equal(await page.getByTestId('cancel').count(), 0, 'no actions on a cancelled booking');
  assert.equal(await page.getByTestId('book-again').getAttribute('href'), `/book/${world.host.slug}/intro`);
  assert.equal((await viewOf(b)).status, 'cancelled');
  await screenshot(page, 'manage-cancelled');
  assert.deepEqual(errors, []);
  // Reopening the reschedule link shows the cancelled state, no picker.
  await page.goto(b.reschedule_url);
  await page.getByTestId('cancelled-note').waitFor();
  assert.equal(await page.getByTestId('reschedule-picker').count(), 0);
  await page.context().close();
});

test('a forged management link says so', async () => {
  for (const viewport of [PHONE, DESKTOP]) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    // A link that does not verify is a styled 404 page from the server (issue #14 item 11).
    const res = await page.goto(`${server.url}/bookings/manage/bk_nothing.AAAA`);
    assert.equal(res?.status(), 404);
    assert.match(await page.getByTestId('not-found').innerText(), /Page not found/);
    await screenshot(page, 'manage-invalid');
    await context.close();
  }
});

test('the host’s confirm and decline pages, and the pending booking as the attendee sees it', async () => {
  const mark = server.output().length;
  const pending1 = await book('visit', 9, 2, 'pending-1@example.com');
  const pending2 = await book('visit', 9, 6, 'pending-2@example.com');
  // The host's emails (logged without SMTP) carry the links.
  let links: string[] = [];
  for (let i = 0; i < 100 && links.length < 4; i++) {
    links = [...new Set([...server.output().slice(mark).matchAll(/\/v1\/bookings\/([A-Za-z0-9_.~-]+)\/(confirm|decline)/g)].map((m) => m[0]))];
    if (links.length < 4) await new Promise((r) => setTimeout(r, 100));
  }
  const confirm = links.filter((l) => l.endsWith('/confirm'));
  const decline = links.filter((l) => l.endsWith('/decline'));
  assert.equal(confirm.length, 2, links.join('\n'));

  const { page } = await open(pending1.cancel_url.replace('?action=cancel', ''), 'UTC', PHONE);
  assert.equal(await page.getByTestId('status').innerText(), 'Pending confirmation');
  await screenshot(page, 'manage-pending');
  await page.context().close();

  for (const viewport of [PHONE, DESKTOP]) {
    const context = await browser.newContext({ viewport });
    const p = await context.newPage();
    await p.goto(server.url + confirm[0]);
    await p.getByRole('button', { name: 'Confirm' }).waitFor();
    await screenshot(p, 'host-confirm-page');
    if (viewport === PHONE) {
      await p.getByRole('button', { name: 'Confirm' }).click();
      await p.getByRole('heading', { name: 'Booking confirmed' }).waitFor();
      await screenshot(p, 'host-confirmed-page');
    }
    await context.close();
  }
  // Which booking a link is for shows on the page; decline the other one.
  const other = decline.find((l) => !l.includes(confirm[0]!.split('/')[3]!))!;
  for (const viewport of [PHONE, DESKTOP]) {
    const context = await browser.newContext({ viewport });
    const p = await context.newPage();
    await p.goto(server.url + other);
    await p.getByRole('button', { name: 'Decline' }).waitFor();
    await screenshot(p, 'host-decline-page');
    if (viewport === DESKTOP) {
      await p.getByRole('button', { name: 'Decline' }).click();
      await p.getByRole('heading', { name: 'Booking declined' }).waitFor();
      await screenshot(p, 'host-declined-page');
    }
    await context.close();
  }
  const statuses = [(await viewOf(pending1)).status, (await viewOf(pending2)).status].sort();
  assert.deepEqual(statuses, ['confirmed', 'declined']);
  const declined = (await viewOf(pending1)).status === 'declined' ? pending1 : pending2;
  const { page: d } = await open(declined.cancel_url, 'UTC', PHONE);
  assert.equal(await d.getByTestId('status').innerText(), 'Declined');
  assert.equal(await d.getByTestId('cancel-form').count(), 0);
  await screenshot(d, 'manage-declined');
  await d.context().close();
});
