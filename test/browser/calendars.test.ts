/// <reference lib="dom" />
// The dashboard's Calendars card (issue #18): a host adds an ICS feed by its address, sees it synced
// with its busy time, and disconnects it; at phone and desktop widths. The feed is served by a local
// HTTP server in this test (private addresses are allowed for this server only).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { browser, browserSuite, DESKTOP, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

browserSuite({ env: { MUSTER_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
let feed: http.Server;
let feedUrl: string;

// An event tomorrow, 10:00-11:00 UTC: inside the card's "next 7 days".
const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');
const ICS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Muster tests//Calendars card//EN',
  'BEGIN:VEVENT',
  'UID:card-test-1@example.com',
  `DTSTAMP:${day}T080000Z`,
  `DTSTART:${day}T100000Z`,
  `DTEND:${day}T110000Z`,
  'SUMMARY:Dentist',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

before(async () => {
  feed = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/calendar' }).end(ICS));
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/personal.ics`;
});
after(async () => {
  feed?.close();
});

for (const [width, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
  test(`Calendars card: add an ICS feed, see its busy time, disconnect it (${width})`, async () => {
    const host = await signUp(server, { name: `Cal Host ${width}` });
    const context = await signedInContext(browser, server, host, { viewport, timezoneId: 'UTC', locale: 'en-US' });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/app/settings`);
    const card = page.getByTestId('calendars');
    await card.waitFor();
    await card.getByLabel('Feed address').fill(feedUrl);
    await card.getByRole('button', { name: /add|connect/i }).click();

    const row = card.locator('[data-testid^="calendar-"]');
    await row.waitFor();
    // Synced at once: status ok, one busy interval, and the event listed under the next 7 days.
    await page.waitForFunction(() => /\bok\b/.test(document.querySelector('[data-testid^="calendar-"] .badge')?.textContent ?? ''), undefined, { timeout: 15_000 });
    assert.match(await row.innerText(), /ICS feed/);
    assert.match(await row.innerText(), /1 busy/);
    assert.match(await row.innerText(), /synced/);
    // The busy list is its own request (read again beside the list of calendars after the add), answered before or
    // after the row's: wait for its entry rather than read the card at once.
    await card.locator('li', { hasText: /10:00\s*(AM)?\s*–/ }).waitFor();
    assert.match(await card.innerText(), /10:00\s*(AM)?\s*–/);
    await screenshot(page, 'calendars-card');

    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Disconnect' }).click();
    await row.waitFor({ state: 'detached' });
    // The busy list is read again after the row goes: wait for it to empty rather than read it at once.
    await card.getByText(/Nothing\./).waitFor();
    assert.doesNotMatch(await card.innerText(), /10:00\s*(AM)?\s*–/);
    assert.deepEqual(errors, []);
    await context.close();
  });
}
