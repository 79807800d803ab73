/// <reference lib="dom" />
// /embed.js on another site (a page served from another port, so another origin): the booking page
// in an iframe grows with its content, and a booking inside it reaches the embedding page as a
// `message` event of type muster:booked from Muster's origin (and a DOM event on the container).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { browser, browserSuite, DESKTOP, PHONE, screenshot, server, watchErrors } from './harness.js';
import { dayIn, fillForm, hostBookings, pickSlot, bookingWorld, type BookingWorld } from './booking-setup.js';

let world: BookingWorld;
let site: http.Server;
let siteUrl: string;

/** The embedding site's page: the documented snippet and a listener that records messages. */
const sitePage = (muster: string, path: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Harbour Plumbing: book a visit</title>
<style>
  body { font: 16px/1.5 Georgia, serif; margin: 0; background: #fbf7f0; color: #2b2118; }
  header { background: #2b2118; color: #fbf7f0; padding: 1rem 1.25rem; font-size: 1.3rem; }
  main { max-width: 980px; margin: 0 auto; padding: 1.25rem; }
</style></head>
<body><header>Harbour Plumbing</header><main>
<h1>Book a visit</h1><p>Pick a time that suits you; we confirm every visit by email.</p>
<div id="booking" data-muster-booking="${path}"></div>
<script src="${muster}/embed.js" async></script>
<script>
  window.received = [];
  window.domEvents = [];
  window.addEventListener('message', function (e) {
    if (e.data && e.data.type === 'muster:booked') window.received.push({ origin: e.origin, data: e.data });
  });
  document.addEventListener('muster:booked', function (e) { window.domEvents.push(e.detail); });
</script>
</main></body></html>`;

browserSuite({
  setUp: async () => {
    world = await bookingWorld(server);
    site = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').searchParams.get('path') ?? `/assign/${world.host.slug}/intro`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(sitePage(server.url, path));
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  },
});
after(async () => {
  await new Promise((resolve) => site?.close(resolve));
});

interface Received {
  origin: string;
  data: { type: string; payload: Record<string, unknown> };
}

async function bookInEmbed(path: string, zone: string, days: number, email: string, viewport: { width: number; height: number }, shot?: string) {
  const context = await browser.newContext({ timezoneId: zone, locale: 'en-US', viewport });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${siteUrl}/?path=${encodeURIComponent(path)}`);
  const iframe = page.locator('#booking iframe');
  await iframe.waitFor();
  const src = new URL((await iframe.getAttribute('src'))!);
  assert.equal(src.origin, server.url);
  assert.equal(src.searchParams.get('embed'), '1');
  assert.equal(src.searchParams.get('parent_origin'), siteUrl);
  const frame = page.frameLocator('#booking iframe');
  await frame.locator('[data-testid="slot"]').first().waitFor();
  // The iframe took the height of its page (muster:resize), not its initial 640 px.
  await page.waitForFunction(() => {
    const f = document.querySelector('#booking iframe') as HTMLIFrameElement;
    return f.style.height !== '640px' && f.getBoundingClientRect().height > 300;
  });
  if (shot) await screenshot(page, `${shot}-host-page`);
  const picked = await pickSlot(frame, dayIn(zone, days), 2);
  await fillForm(frame, 'Ivy Iframe', email);
  await frame.getByTestId('submit').click();
  await frame.getByTestId('confirmation').waitFor();
  await page.waitForFunction(() => (window as unknown as { received: unknown[] }).received.length > 0);
  if (shot) await screenshot(page, `${shot}-booked`);
  const received = await page.evaluate(() => (window as unknown as { received: Received[] }).received);
  const domEvents = await page.evaluate(() => (window as unknown as { domEvents: unknown[] }).domEvents);
  assert.deepEqual(errors, []);
  await context.close();
  return { picked, received, domEvents };
}

test('a booking inside the embed posts muster:booked to the embedding page, from Muster’s origin', async () => {
  const { picked, received, domEvents } = await bookInEmbed(`/assign/${world.host.slug}/intro`, 'America/New_York', 3, 'ivy@example.com', DESKTOP, 'embed');
  assert.equal(received.length, 1);
  const [msg] = received;
  assert.equal(msg!.origin, server.url);
  assert.equal(msg!.data.type, 'muster:booked');
  const stored = (await hostBookings(server, world.host)).find((b) => b.attendee_email === 'ivy@example.com')!;
  assert.deepEqual(msg!.data.payload, {
    id: stored.id,
    status: 'confirmed',
    requires_confirmation: false,
    attendee_name: 'Ivy Iframe',
    start_time: picked.start,
    end_time: stored.end_time,
    event_type_id: world.intro,
    timezone: 'America/New_York',
  });
  assert.deepEqual(domEvents, [msg!.data.payload]);
});

test('an event type that needs confirmation: the message says pending (phone width)', async () => {
  const { received } = await bookInEmbed(`/assign/${world.host.slug}/visit`, 'Asia/Tokyo', 5, 'pending-embed@example.com', PHONE, 'embed-pending');
  assert.equal(received.length, 1);
  assert.equal(received[0]!.data.type, 'muster:booked');
  assert.equal(received[0]!.data.payload.status, 'pending');
  assert.equal(received[0]!.data.payload.requires_confirmation, true);
});

test('a team page embeds too, by the JS API', async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await page.goto(`${siteUrl}/?path=${encodeURIComponent('/nothing-here')}`);
  await page.waitForFunction(() => 'Muster' in window);
  await page.evaluate((path) => {
    const el = document.createElement('div');
    el.id = 'second';
    document.body.append(el);
    (window as unknown as { Muster: { embed(e: Element, p: string): void } }).Muster.embed(el, path);
  }, `/book/${world.org}/${world.team}/support`);
  await page.frameLocator('#second iframe').getByTestId('event-name').waitFor();
  assert.equal(await page.frameLocator('#second iframe').getByTestId('event-name').innerText(), 'Support session');
  await context.close();
});
