/// <reference lib="dom" />
// The dispatcher's map (issue 20), at phone and desktop widths: devices arriving refit the map;
// each marker carries the person's initials in their own colour, and the device's name; a device's
// trail grows as its beacons arrive; Follow keeps a moving device in view; "create incident here"
// from a signal and from a point on the map creates the incident at that position, shown as a marker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { type ApiUser, browser, browserSuite, DESKTOP, noHorizontalOverflow, ok, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

browserSuite();

const marker = (key: string) => `.leaflet-marker-icon[data-key="${key}"]`;

/** Whether the element's centre lies inside the map's visible box (with a margin). */
async function inView(page: Page, selector: string, margin = 4): Promise<boolean> {
  return page.evaluate(
    ([sel, m]) => {
      const el = document.querySelector(sel);
      const map = document.querySelector('[data-testid="beacon-map"]');
      if (!el || !map) return false;
      const r = el.getBoundingClientRect();
      const b = map.getBoundingClientRect();
      const x = r.left + r.width / 2;
      const y = r.top + r.height / 2;
      return x >= b.left + m && x <= b.right - m && y >= b.top + m && y <= b.bottom - m;
    },
    [selector, margin] as const,
  );
}

async function waitInView(page: Page, selectors: string[]): Promise<void> {
  await page.waitForFunction(
    (sels) => {
      const map = document.querySelector('[data-testid="beacon-map"]')!.getBoundingClientRect();
      return sels.every((sel) => {
        const el = document.querySelector(sel);
        if (!el) return false;
        const r = el.getBoundingClientRect();
        const x = r.left + r.width / 2;
        const y = r.top + r.height / 2;
        return x >= map.left && x <= map.right && y >= map.top && y <= map.bottom;
      });
    },
    selectors,
    { timeout: 10_000 },
  );
}

for (const [kind, viewport] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
  test(`the dispatcher's map at ${kind} width: refit, labelled markers, trails, Follow, create incident here`, async () => {
    const dispatcher = await signUp(server, { name: 'Dora Dispatcher' });
    const nina = await signUp(server, { name: 'Nina Near' });
    const felix = await signUp(server, { name: 'Felix Far' });
    const orgs = await ok<{ orgs: { id: number; slug: string; primary: boolean }[] }>('GET', '/v1/orgs', undefined, dispatcher);
    const org = orgs.orgs.find((o) => o.primary)!;
    for (const u of [nina, felix]) await ok('POST', `/v1/orgs/${org.slug}/members`, { email: u.email, role: 'member' }, dispatcher);
    // Nina's van is a registered tracker device with a name; Felix beacons from a phone.
    const van = await ok<{ device_id: string }>('POST', '/v1/devices', { name: 'Van 12', org_id: org.id }, nina);
    const ninaKey = van.device_id;
    const felixKey = `dev-felix${kind === 'phone' ? 'p' : 'd'}-00000001`;
    const beacon = (u: ApiUser, device: string, lat: number, lng: number) => ok('POST', '/v1/signals', { type: 'beacon', lat, lng, accuracy: 5, org_id: org.id, meta: { device_id: device } }, u);

    const context = await signedInContext(browser, server, dispatcher, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/app/signals`);
    await page.waitForSelector('[data-testid="live-state"] >> text=Live');
    await page.waitForSelector('[data-testid="beacon-map"].leaflet-container');

    // Devices arriving refit the map: Nina alone (the map zooms in on her), then Felix 3 km away,
    // off that view, and the map fits both.
    await beacon(nina, ninaKey, 52.52, 13.405);
    await page.waitForSelector(marker(ninaKey));
    await waitInView(page, [marker(ninaKey)]);
    await beacon(felix, felixKey, 52.547, 13.405);
    await page.waitForSelector(marker(felixKey));
    await waitInView(page, [marker(ninaKey), marker(felixKey)]);
    assert.equal(await page.isVisible('[data-testid="fit-all"]'), false, 'no "Fit all" while the map fits by itself');

    // Markers carry initials and a colour per person; the list and the tooltip name the device.
    assert.equal((await page.textContent(marker(ninaKey)))?.trim(), 'NN');
    assert.equal((await page.textContent(marker(felixKey)))?.trim(), 'FF');
    const colour = (key: string) => page.$eval(`${marker(key)} span`, (e) => getComputedStyle(e).backgroundColor);
    const [ninaColour, felixColour] = [await colour(ninaKey), await colour(felixKey)];
    assert.notEqual(ninaColour, felixColour, 'one colour per person');
    assert.equal(await page.$eval(`[data-testid="beacon-row"][data-device-id="${ninaKey}"] [data-testid="person-badge"]`, (e) => getComputedStyle(e).backgroundColor), ninaColour, 'the list uses the same colour');
    assert.equal(await page.textContent(`[data-testid="beacon-row"][data-device-id="${ninaKey}"] [data-testid="device-name"]`), 'Van 12');
    assert.match((await page.getAttribute(marker(ninaKey), 'aria-label')) ?? '', /^NN: Nina Near · Van 12 · /);
    await page.hover(marker(ninaKey));
    await page.waitForSelector('.leaflet-tooltip >> text=Nina Near · Van 12');

    // The trail grows as beacons arrive: one segment per step since the page opened.
    const segments = () => page.locator(`path.trail[data-trail="${ninaKey}"]`).count();
    assert.equal(await segments(), 0);
    for (let i = 1; i <= 3; i++) {
      await beacon(nina, ninaKey, 52.52 + 0.002 * i, 13.405 + 0.003 * i);
      await page.waitForFunction(([k, n]) => document.querySelectorAll(`path.trail[data-trail="${k}"]`).length === n, [ninaKey, i] as const);
    }
    const opacities = await page.$$eval(`path.trail[data-trail="${ninaKey}"]`, (ps) => ps.map((p) => Number(p.getAttribute('stroke-opacity'))));
    assert.ok(opacities[0]! < opacities[2]!, `older segments fade: ${opacities.join(', ')}`);
    await screenshot(page, 'map-devices');

    // Follow: select Nina, follow her; she moves 20 km away, twice, and stays in view.
    await page.click(`[data-testid="beacon-row"][data-device-id="${ninaKey}"] button.device`);
    await page.click(`[data-testid="beacon-row"][data-device-id="${ninaKey}"] [data-testid="follow"]`);
    await page.waitForSelector('[data-testid="following"] >> text=Following Nina Near · Van 12');
    for (const [lat, lng] of [[52.7, 13.6], [52.9, 13.9]] as const) {
      await beacon(nina, ninaKey, lat, lng);
      await page.waitForFunction(
        (k) => {
          const el = document.querySelector(`.leaflet-marker-icon[data-key="${k}"]`);
          const map = document.querySelector('[data-testid="beacon-map"]');
          if (!el || !map) return false;
          const r = el.getBoundingClientRect();
          const b = map.getBoundingClientRect();
          // Centred (Follow), within a few pixels.
          return Math.abs(r.left + r.width / 2 - (b.left + b.width / 2)) < 3 && Math.abs(r.top + r.height / 2 - (b.top + b.height / 2)) < 3;
        },
        ninaKey,
        { timeout: 10_000 },
      );
    }
    assert.equal(await inView(page, marker(felixKey)), false, 'Felix is far off the followed view');
    await screenshot(page, 'map-follow');
    // A pan by hand ends Follow; "Fit all" brings every device back.
    await page.locator('[data-testid="beacon-map"]').scrollIntoViewIfNeeded();
    const box = (await page.locator('[data-testid="beacon-map"]').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 60, box.y + box.height / 2 + 20, { steps: 5 });
    await page.mouse.up();
    await page.waitForSelector('[data-testid="following"]', { state: 'detached' });
    await page.click('[data-testid="fit-all"]');
    await waitInView(page, [marker(ninaKey), marker(felixKey)]);
    await page.waitForSelector('[data-testid="fit-all"]', { state: 'detached' });

    // Create incident here, from a signal with a position.
    const note = await ok<{ Id: number; lat: number; lng: number }>('POST', '/v1/signals', { type: 'note', note: 'Smoke behind the depot', lat: 52.531, lng: 13.417, org_id: org.id }, felix);
    const row = page.locator('[data-testid="signal-row"]', { hasText: 'Smoke behind the depot' });
    await row.locator('[data-testid="signal-incident-here"]').click();
    await page.waitForSelector('[data-testid="incident-here-form"]');
    assert.equal(await page.inputValue('#here-description'), 'Smoke behind the depot', 'the note fills the description');
    assert.match((await page.textContent('[data-testid="incident-here-position"]')) ?? '', /52\.53100, 13\.41700/);
    await page.fill('#here-title', 'Smoke at the depot');
    await page.selectOption('#here-priority', 'high');
    await screenshot(page, 'map-incident-form');
    await page.click('[data-testid="incident-here-submit"]');
    await page.waitForSelector('[data-testid="incident-saved"]');
    const fromSignal = Number((await page.getAttribute('[data-testid="incident-saved-link"]', 'href'))?.split('/').pop());
    const created = await ok<{ title: string; priority: string; lat: number; lng: number; description: string; org_id: number; source: string }>('GET', `/v1/tickets/${fromSignal}`, undefined, dispatcher);
    assert.deepEqual([created.title, created.priority, created.lat, created.lng, created.description, created.org_id, created.source], ['Smoke at the depot', 'high', note.lat, note.lng, 'Smoke behind the depot', org.id, 'dashboard']);
    await page.waitForSelector(`.leaflet-marker-icon.marker-incident[data-key="incident-${fromSignal}"]`);
    // The signal now links to its incident instead of offering another.
    assert.equal(await row.locator('[data-testid="signal-incident-made"]').getAttribute('href'), `/app/incidents/${fromSignal}`);
    assert.equal(await row.locator('[data-testid="signal-incident-here"]').count(), 0);

    // Create incident here, from a point on the map: a click on empty map, away from any marker.
    await page.locator('[data-testid="beacon-map"]').scrollIntoViewIfNeeded();
    // Where on the map (relative to its box) the dispatcher clicks.
    const spot = await page.evaluate(() => {
      const b = document.querySelector('[data-testid="beacon-map"]')!.getBoundingClientRect();
      for (const [fx, fy] of [[0.7, 0.75], [0.3, 0.7], [0.75, 0.3], [0.6, 0.55], [0.4, 0.3]] as const) {
        const x = Math.round(b.width * fx);
        const y = Math.round(b.height * fy);
        const hit = document.elementFromPoint(b.left + x, b.top + y);
        if (hit && !hit.closest('.leaflet-marker-icon, .leaflet-control, .leaflet-tooltip')) return { x, y };
      }
      return null;
    });
    assert.ok(spot, 'an empty point on the map');
    const mapBox = async () => (await page.locator('[data-testid="beacon-map"]').boundingBox())!;
    const before = await mapBox();
    await page.mouse.click(before.x + spot.x, before.y + spot.y);
    await page.waitForSelector('[data-testid="incident-here-form"]');
    await page.waitForSelector('.leaflet-marker-icon.marker-pick');
    const shown = /(-?\d+\.\d+), (-?\d+\.\d+)/.exec((await page.textContent('[data-testid="incident-here-position"]')) ?? '')!;
    await page.fill('#here-title', 'Fallen tree on the road');
    await page.click('[data-testid="incident-here-submit"]');
    await page.waitForSelector('[data-testid="incident-saved"] >> text=Fallen tree on the road');
    const fromMap = Number((await page.getAttribute('[data-testid="incident-saved-link"]', 'href'))?.split('/').pop());
    assert.notEqual(fromMap, fromSignal);
    const picked = await ok<{ lat: number; lng: number; title: string }>('GET', `/v1/tickets/${fromMap}`, undefined, dispatcher);
    assert.deepEqual([picked.lat.toFixed(5), picked.lng.toFixed(5)], [shown[1], shown[2]], 'the position shown in the form');
    // Its marker sits where the dispatcher clicked.
    const inc = `.leaflet-marker-icon.marker-incident[data-key="incident-${fromMap}"]`;
    await page.waitForSelector(inc);
    const r = (await page.locator(inc).boundingBox())!;
    const m = await mapBox();
    const at = { x: r.x + r.width / 2 - m.x, y: r.y + r.height / 2 - m.y };
    assert.ok(Math.abs(at.x - spot.x) <= 2 && Math.abs(at.y - spot.y) <= 2, `marker at ${at.x},${at.y} of the map, clicked ${spot.x},${spot.y}`);
    assert.equal(await page.locator('.leaflet-marker-icon.marker-pick').count(), 0, 'the picked point gives way to the marker');
    // Incidents and beacons are told apart by shape and label.
    assert.equal((await page.textContent(inc))?.trim(), '!');
    assert.match((await page.getAttribute(inc, 'aria-label')) ?? '', new RegExp(`^Incident #${fromMap} · normal · Fallen tree on the road$`));
    await screenshot(page, 'map-incident-saved');

    // The keyboard's way: "New incident at map centre".
    await page.focus('[data-testid="incident-at-centre"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid="incident-here-form"]');
    // The form moves the focus once it has drawn (an effect after the render): wait for it, bounded.
    await page.waitForFunction(() => document.activeElement?.id === 'here-title', undefined, { timeout: 10_000 }).catch(() => undefined);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'here-title', 'the form takes the focus');
    await page.click('[data-testid="incident-here-form"] button >> text=Cancel');
    await page.waitForSelector('[data-testid="incident-here-form"]', { state: 'detached' });

    assert.deepEqual(errors, []);
    await context.close();
  });
}

// Sites (issue #38): drawn and edited on the map, every step also reachable by the form beside it.
test('sites: a circle placed by a click and a polygon of clicked corners are saved, shown after a reload, moved by dragging, resized and deleted', async () => {
  const admin = await signUp(server, { name: 'Sam Sites' });
  const org = (await ok<{ orgs: { id: number; slug: string; primary: boolean }[] }>('GET', '/v1/orgs', undefined, admin)).orgs.find((o) => o.primary)!;
  type Site = { id: number; name: string; kind: string; lat: number | null; lng: number | null; radius_m: number | null; area: { coordinates: number[][][] } | null };
  const sites = async () => (await ok<{ sites: Site[] }>('GET', `/v1/orgs/${org.slug}/sites`, undefined, admin)).sites;
  const context = await signedInContext(browser, server, admin, { viewport: DESKTOP });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/app/sites`);
  await page.waitForSelector('[data-testid="sites-map"].leaflet-container');
  await page.getByText('No sites yet.').waitFor();
  const box = async () => (await page.locator('[data-testid="sites-map"]').boundingBox())!;
  const clickMap = async (fx: number, fy: number) => {
    const b = await box();
    await page.mouse.click(b.x + b.width * fx, b.y + b.height * fy);
  };

  // A circle: "New circle", a click places the centre, then name and radius.
  await page.getByTestId('new-circle').click();
  await clickMap(0.5, 0.5);
  await page.waitForFunction(() => (document.querySelector<HTMLInputElement>('[data-testid="site-lat"]')?.value ?? '') !== '');
  await page.waitForSelector('.site-handle.site-centre');
  await page.getByTestId('site-name').fill('North depot');
  await page.getByTestId('site-radius').fill('200');
  const [lat, lng] = [Number(await page.getByTestId('site-lat').inputValue()), Number(await page.getByTestId('site-lng').inputValue())];
  await screenshot(page, 'sites-circle-form');
  await page.getByTestId('site-save').click();
  await page.getByTestId('site-notice').getByText('Saved “North depot” (circle, 200 m).').waitFor();
  const [circle] = await sites();
  assert.deepEqual([circle!.name, circle!.kind, circle!.lat, circle!.lng, circle!.radius_m], ['North depot', 'circle', lat, lng, 200]);

  // After a reload it is listed, drawn and named on the map.
  await page.reload();
  await page.getByTestId('site-row').filter({ hasText: 'North depot' }).waitFor();
  await page.waitForSelector(`path.site-shape[data-site-id="${circle!.id}"]`);
  await page.locator('.leaflet-tooltip.site-label', { hasText: 'North depot' }).waitFor();

  // A polygon: four clicked corners that cross (a bow tie) are the API's 422, said beside the corners;
  // without the fourth it is a triangle and is saved.
  await page.getByTestId('new-polygon').click();
  for (const [fx, fy] of [[0.15, 0.15], [0.35, 0.85], [0.35, 0.15], [0.15, 0.85]] as const) await clickMap(fx, fy);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="site-points"] li').length === 4);
  await page.getByTestId('close-polygon').click();
  await page.getByTestId('site-name').fill('Yard');
  await page.getByTestId('site-save').click();
  await page.getByTestId('area-error').waitFor();
  assert.match((await page.getByTestId('area-error').textContent()) ?? '', /intersects itself/);
  await screenshot(page, 'sites-polygon-422');
  await page.getByRole('button', { name: 'Remove corner 4' }).click();
  await page.getByTestId('site-save').click();
  await page.getByTestId('site-notice').getByText('Saved “Yard” (polygon, 3 points).').waitFor();
  const yard = (await sites()).find((s) => s.name === 'Yard')!;
  assert.equal(yard.kind, 'polygon');
  assert.equal(yard.area!.coordinates[0]!.length, 4, 'three corners and the closing position');
  await page.waitForSelector(`path.site-shape[data-site-id="${yard.id}"]`);

  // Edit the circle: drag its centre, which fills the fields, and change the radius by typing.
  await page.getByTestId('site-row').filter({ hasText: 'North depot' }).click();
  await page.getByTestId('site-form').getByText('Edit “North depot”').waitFor();
  const handle = (await page.locator('.site-handle.site-centre').boundingBox())!;
  await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
  await page.mouse.down();
  await page.mouse.move(handle.x + 60, handle.y + 30, { steps: 6 });
  await page.mouse.up();
  await page.waitForFunction((was) => document.querySelector<HTMLInputElement>('[data-testid="site-lat"]')?.value !== was, String(circle!.lat));
  await page.getByTestId('site-radius').fill('300');
  const moved = [Number(await page.getByTestId('site-lat').inputValue()), Number(await page.getByTestId('site-lng').inputValue())];
  assert.notDeepEqual(moved, [circle!.lat, circle!.lng]);
  await page.getByTestId('site-save').click();
  await page.getByTestId('site-notice').getByText('Saved “North depot” (circle, 300 m).').waitFor();
  const after = (await sites()).find((s) => s.id === circle!.id)!;
  assert.deepEqual([after.lat, after.lng, after.radius_m], [...moved, 300]);
  await screenshot(page, 'sites-list');

  // Delete the yard, after a confirmation.
  await page.getByTestId('site-row').filter({ hasText: 'Yard' }).click();
  page.once('dialog', (d) => void d.accept());
  await page.getByTestId('site-delete').click();
  await page.getByTestId('site-notice').getByText('Deleted “Yard”.').waitFor();
  assert.deepEqual((await sites()).map((s) => s.name), ['North depot']);

  // At phone width: the map, the tools and the list, without sideways scrolling.
  await page.setViewportSize(PHONE);
  await page.getByTestId('new-circle').click();
  await page.getByRole('button', { name: "Centre on the map's centre" }).click();
  await page.waitForSelector('.site-handle.site-centre');
  await screenshot(page, 'sites');
  await noHorizontalOverflow(page);
  assert.deepEqual(errors.filter((e) => !/status of 422/.test(e)), []);
  await context.close();
});
