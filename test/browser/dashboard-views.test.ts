/// <reference lib="dom" />
// Every dashboard view with seeded data, at phone and desktop widths (screenshots for a person to
// look at), and the live signals map: a beacon that starts appears as a marker and a device row
// (the field terminal's test relies on that row), and disappears when it stops.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { type ApiUser, browser, browserSuite, call, DESKTOP, noHorizontalOverflow, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

let owner: ApiUser;
let incidentId: number;
let eventTypeId: number;
const orgSlug = 'north-ops';

async function ok<T>(p: Promise<{ status: number; body: T }>, status = [200, 201]): Promise<T> {
  const r = await p;
  if (!status.includes(r.status)) throw new Error(`seed failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

browserSuite({
  setUp: async () => {
    // The first user of an instance is its admin: it may give itself the enterprise plan.
    owner = await signUp(server, { name: 'Avery Admin', timezone: 'Europe/Berlin' });
    const c = owner.cookie;
    await ok(call(server, 'PATCH', `/v1/users/${owner.id}`, { plan: 'enterprise' }, c));
    const mate = await signUp(server, { name: 'Sam Field' });
    const org = await ok(call<{ id: number }>(server, 'POST', '/v1/orgs', { name: 'North Ops', slug: orgSlug, description: 'Northern district response' }, c));
    await ok(call(server, 'POST', `/v1/orgs/${orgSlug}/members`, { email: mate.email, role: 'member' }, c));
    await ok(call(server, 'POST', `/v1/orgs/${orgSlug}/members`, { email: 'pending.person@example.com', role: 'admin' }, c));
    await ok(call(server, 'POST', `/v1/orgs/${orgSlug}/teams`, { name: 'Night shift', routing: 'round_robin' }, c));
    await ok(call(server, 'POST', `/v1/orgs/${orgSlug}/teams/night-shift/members`, { user_id: mate.id }, c));

    const titles: [string, string][] = [
      ['Power outage at the depot', 'urgent'],
      ['Flooded underpass on Route 9', 'high'],
      ['Fallen tree blocking the bike path', 'normal'],
      ['Graffiti on the water tower', 'low'],
    ];
    for (const [title, priority] of titles) {
      const t = await ok(call<{ Id: number }>(server, 'POST', '/v1/tickets', { title, priority, description: `${title}. Reported by phone.`, location_name: 'North district' }, c));
      incidentId = t.Id;
    }
    await ok(call(server, 'POST', `/v1/tickets/${incidentId}/replies`, { body: 'We have crews on site.', public: true }, c));
    await ok(call(server, 'POST', `/v1/tickets/${incidentId}/replies`, { body: 'Need a cherry picker from the east yard.' }, c));
    await ok(call(server, 'PATCH', `/v1/tickets/${incidentId}`, { status: 'in_progress' }, c));
    await ok(call(server, 'POST', '/v1/tickets', { title: 'Gas smell reported near school', priority: 'urgent', org_id: org.id }, c));

    await ok(call(server, 'POST', '/v1/signals', { type: 'note', note: 'Road closed at the bridge, detour via Mill Lane.', lat: 52.52, lng: 13.405 }, c));
    await ok(call(server, 'POST', '/v1/signals', { type: 'checkin', lat: 52.515, lng: 13.39 }, c));
    await ok(call(server, 'POST', '/v1/signals', { type: 'alert', note: 'Injured person at the north gate', lat: 52.53, lng: 13.41, org_id: org.id }, c));
    await ok(call(server, 'POST', '/v1/signals', { type: 'beacon', lat: 52.5205, lng: 13.4095, accuracy: 12, meta: { device_id: 'dev-seed01-00000001' } }, c));
    await ok(call(server, 'POST', '/v1/signals', { type: 'beacon', lat: 52.51, lng: 13.38, accuracy: 30, meta: { device_id: 'dev-seed02-00000002' }, org_id: org.id }, c));

    const week = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '00:00', end: '24:00' }));
    const et = await ok(
      call<{ id: number }>(server, 'POST', '/v1/event-types', { name: 'Site survey', duration_minutes: 45, location_type: 'in_person', availability: { timezone: 'UTC', weekly: week } }, c),
    );
    eventTypeId = et.id;
    await ok(call(server, 'POST', '/v1/event-types', { name: 'Intro call', duration_minutes: 15, requires_confirmation: true }, c));
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const slots = await ok(call<{ slots: { start_time: string }[] }>(server, 'GET', `/v1/availability?event_type_id=${eventTypeId}&date=${tomorrow}&timezone=UTC`, undefined, c));
    for (const [i, name] of ['Jordan Lee', 'Priya Natarajan'].entries()) {
      await ok(
        call(server, 'POST', '/v1/bookings', { event_type_id: eventTypeId, attendee_name: name, attendee_email: `guest${i}@example.com`, start_time: slots.slots[i * 4]!.start_time, notes: i === 0 ? 'Gate code 4411' : undefined }, c),
      );
    }
    await ok(call(server, 'POST', '/v1/api-keys', { name: 'CI pipeline', mode: 'test' }, c));
  },
});

const VIEWS: { name: string; path: () => string; ready: string }[] = [
  { name: 'incidents', path: () => '/app/incidents', ready: '[data-testid="incident-row"]' },
  { name: 'incident-detail', path: () => `/app/incidents/${incidentId}`, ready: '[data-testid="reply"]' },
  { name: 'signals', path: () => '/app/signals', ready: '[data-testid="beacon-row"] >> nth=1' },
  { name: 'bookings', path: () => '/app/bookings', ready: '[data-testid="booking-row"]' },
  { name: 'event-types', path: () => '/app/event-types', ready: '[data-testid="event-type-row"]' },
  { name: 'event-type-editor', path: () => `/app/event-types/${eventTypeId}`, ready: '[data-testid="weekly-editor"]' },
  { name: 'orgs', path: () => '/app/orgs', ready: '[data-testid="org-row"]' },
  { name: 'org-detail', path: () => `/app/orgs/${orgSlug}`, ready: '[data-testid="member-list"] li' },
  { name: 'settings', path: () => '/app/settings', ready: '[data-testid="key-row"]' },
];

for (const [kind, viewport] of [
  ['phone', PHONE],
  ['desktop', DESKTOP],
] as const) {
  test(`every view renders its data without errors or sideways scrolling (${kind})`, async () => {
    const context: BrowserContext = await signedInContext(browser, server, owner, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    for (const v of VIEWS) {
      await page.goto(server.url + v.path());
      await page.waitForSelector(v.ready);
      await page.waitForLoadState('networkidle').catch(() => undefined);
      await screenshot(page, `dashboard-${v.name}`);
      await noHorizontalOverflow(page);
    }
    // The navigation: a sidebar on desktop, a menu behind a button on phones.
    await page.goto(`${server.url}/app/incidents`);
    await page.waitForSelector('[data-testid="incident-row"]');
    if (kind === 'phone') {
      assert.equal(await page.isVisible('a.nav-link[href="/app/signals"]'), false, 'the menu starts closed on phones');
      await page.click('.menu-button');
      await page.waitForSelector('a.nav-link[href="/app/signals"]', { state: 'visible' });
      await screenshot(page, 'dashboard-menu');
    } else {
      assert.equal(await page.isVisible('a.nav-link[href="/app/signals"]'), true);
    }
    await page.click('a.nav-link[href="/app/signals"]');
    await page.waitForSelector('[data-testid="beacon-row"]');
    // Several orgs: the switcher narrows the lists to one of them.
    if (kind === 'desktop') {
      await page.goto(`${server.url}/app/incidents`);
      await page.waitForSelector('[data-testid="incident-row"] >> nth=4');
      const northId = await page.$eval('[data-testid="org-switcher"] option:nth-child(3)', (o) => (o as HTMLOptionElement).value);
      await page.selectOption('[data-testid="org-switcher"]', northId);
      // Two: the one reported, and the one the alert at the north gate opened (docs/dispatch.md).
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="incident-row"]').length === 2);
      const north = await page.textContent('[data-testid="incident-list"]');
      assert.ok(north?.includes('Gas smell reported near school') && north.includes('Injured person at the north gate'));
      await page.selectOption('[data-testid="org-switcher"]', '');
    }

    const signedOut = await browser.newContext({ viewport });
    const login = await signedOut.newPage();
    await login.goto(`${server.url}/app/`);
    await login.waitForSelector('[data-testid="login-form"]');
    await noHorizontalOverflow(login);
    await screenshot(login, 'dashboard-login');
    await signedOut.close();

    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('the signals map: a beacon that starts appears as a marker and a device row, moves live, and leaves when it stops', async () => {
  const context = await signedInContext(browser, server, owner, { viewport: DESKTOP });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/app/signals`);
  await page.waitForSelector('[data-testid="beacon-row"][data-device-id="dev-seed01-00000001"]');
  await page.waitForSelector('[data-testid="live-state"] >> text=Live');
  // One marker per active beacon (incidents with a position have markers of their own), drawn without tiles.
  const markersBefore = 2;
  await page.waitForFunction((n) => document.querySelectorAll('.leaflet-marker-icon.marker-beacon').length === n, markersBefore);
  assert.equal(await page.locator('.leaflet-tile').count(), 0, 'MAP_TILE_URL="" loads no tiles');

  const device = 'dev-live01-00000003';
  await ok(call(server, 'POST', '/v1/signals', { type: 'beacon', lat: 52.5, lng: 13.42, accuracy: 8, meta: { device_id: device } }, owner.cookie));
  await page.waitForSelector(`[data-testid="beacon-row"][data-device-id="${device}"]`);
  await page.waitForFunction((n) => document.querySelectorAll('.leaflet-marker-icon.marker-beacon').length === n, markersBefore + 1);

  // A stored note arrives in the feed live.
  await ok(call(server, 'POST', '/v1/signals', { type: 'note', note: 'Live note from the east yard' }, owner.cookie));
  await page.waitForSelector('[data-testid="signal-row"] >> text=Live note from the east yard');

  await ok(call(server, 'DELETE', '/v1/signals/beacon', { device_id: device }, owner.cookie));
  await page.waitForSelector(`[data-testid="beacon-row"][data-device-id="${device}"]`, { state: 'detached' });
  await page.waitForFunction((n) => document.querySelectorAll('.leaflet-marker-icon.marker-beacon').length === n, markersBefore);
  assert.deepEqual(errors, []);
  await context.close();
});

test('API keys: a new key is shown once with its secret, listed redacted, and revoked', async () => {
  const context = await signedInContext(browser, server, owner, { viewport: DESKTOP });
  const page = await context.newPage();
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${server.url}/app/settings`);
  await page.waitForSelector('[data-testid="key-row"]');
  const before = await page.locator('[data-testid="key-row"]').count();
  await page.fill('#k-name', 'Billing sync');
  await page.selectOption('#k-mode', 'live');
  await page.click('[data-testid="api-keys"] form button[type="submit"]');
  const secret = (await page.textContent('[data-testid="new-key-secret"]'))?.trim() ?? '';
  assert.match(secret, /^sk_live_[A-Za-z0-9_-]{43}$/);
  const me = await call<{ id: number }>(server, 'GET', '/v1/auth/me', undefined, undefined);
  assert.equal(me.status, 401);
  const withKey = await fetch(`${server.url}/v1/auth/me`, { headers: { 'x-api-key': secret } });
  assert.equal(withKey.status, 200, 'the shown secret works');
  await page.click('text=I have saved it');
  await page.waitForSelector('[data-testid="new-key-secret"]', { state: 'detached' });
  const row = page.locator('[data-testid="key-row"]', { hasText: 'Billing sync' });
  assert.equal(await page.locator('[data-testid="key-row"]').count(), before + 1);
  assert.equal((await row.textContent())?.includes(secret), false, 'the list never shows the secret');
  assert.ok((await row.textContent())?.includes(`sk_live_...${secret.slice(-4)}`));
  await row.locator('button', { hasText: 'Revoke' }).click();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="key-row"]').length === n, before);
  const revoked = await fetch(`${server.url}/v1/auth/me`, { headers: { 'x-api-key': secret } });
  assert.equal(revoked.status, 401, 'the revoked key no longer works');
  await context.close();
});
