/// <reference lib="dom" />
// The dashboard's Devices view (issue #17): a dispatcher adds a tracker app, is shown its token,
// its four URLs and OwnTracks' configuration QR code once; the app's first fix (OsmAnd protocol,
// as Traccar Client sends it) shows the device beaconing with its position, the list never shows
// the token again, and revoking it takes it off the list and turns its URL into a 401.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import qrcode from 'qrcode-generator';
import { type ApiUser, browser, browserSuite, DESKTOP, noHorizontalOverflow, ok, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

let owner: ApiUser;

browserSuite({
  setUp: async () => {
    owner = await signUp(server, { name: 'Dana Dispatch' });
  },
});

for (const [kind, viewport] of [
  ['phone', PHONE],
  ['desktop', DESKTOP],
] as const) {
  test(`a tracker app is added, reports, is listed without its token and is revoked (${kind})`, async () => {
    const context = await signedInContext(browser, server, owner, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    const name = `Van 12 ${kind}`;

    await page.goto(`${server.url}/app/devices`);
    await page.waitForSelector('[data-testid="new-device"]');
    await page.fill('#device-name', name);
    await page.click('[data-testid="new-device"] button[type="submit"]');
    await page.waitForSelector('[data-testid="device-created"]');
    const token = (await page.textContent('[data-testid="device-token"]'))!.trim();
    assert.ok(token.length >= 20, `a token is shown once: ${token}`);
    const created = await page.textContent('[data-testid="device-created"]');
    assert.ok(created?.includes(`/v1/trackers/osmand?id=${token}`), 'the OsmAnd / Traccar Client URL carries the token');
    assert.ok(created?.includes(`/v1/trackers/owntracks?token=${token}`), 'the OwnTracks URL carries the token');
    assert.ok(created?.includes(`/v1/trackers/gpslogger?token=${token}&lat=%LAT&lon=%LON`), "GPSLogger's custom URL with its placeholders");
    assert.ok(created?.includes('/v1/trackers/traccar'), 'the Traccar Client JSON URL');

    // The QR code is OwnTracks' remote-configuration link for this device: HTTP mode, this
    // device's id as the user and its token as the password (docs/trackers.md).
    const devices = (await (await fetch(`${server.url}/v1/devices`, { headers: { cookie: owner.cookie } })).json()) as { devices: { name: string; device_id: string; osmand_url: string }[] };
    const listed = devices.devices.find((d) => d.name === name)!;
    const config = { _type: 'configuration', mode: 3, url: `${server.url}/v1/trackers/owntracks`, auth: true, username: listed.device_id, password: token, deviceId: listed.device_id, tid: 'V1' };
    const qr = qrcode(0, 'M');
    qr.addData(`owntracks:///config?inline=${Buffer.from(JSON.stringify(config)).toString('base64')}`);
    qr.make();
    assert.equal(await page.getAttribute('[data-testid="owntracks-qr"]', 'src'), qr.createDataURL(4, 8), 'the QR code encodes the OwnTracks configuration of this device');
    await screenshot(page, 'devices-created');
    await noHorizontalOverflow(page);
    // The list below the new device's card is read again from the API: it holds no secret either.
    const fresh = page.locator('[data-testid="device-row"]', { hasText: name });
    await fresh.getByText('/v1/trackers/osmand?id={token}').waitFor();
    assert.ok(!(await fresh.textContent())?.includes(token), 'the list shows the token only in the card of the new device');

    // The app's first fix, as Traccar Client's OsmAnd protocol sends it (query parameters).
    const osmand = `${server.url}/v1/trackers/osmand?id=${token}`;
    const fix = await fetch(`${osmand}&lat=52.5163&lon=13.3777&timestamp=${Math.floor(Date.now() / 1000)}&speed=0&batt=81`);
    assert.equal(fix.status, 200, await fix.text());

    await page.reload();
    const row = page.locator('[data-testid="device-row"]', { hasText: name });
    await row.waitFor();
    await row.locator('text=Beaconing').waitFor();
    const text = await row.textContent();
    assert.ok(text?.includes('52.51630') && text.includes('13.37770'), `the last position is shown: ${text}`);
    assert.ok(!text?.includes(token), 'the list never shows the token again');
    assert.ok(text?.includes('/v1/trackers/osmand?id={token}'), 'listed URLs carry a placeholder instead');
    await screenshot(page, 'devices-list');
    await noHorizontalOverflow(page);

    page.once('dialog', (d) => void d.accept());
    await row.locator('button', { hasText: 'Revoke' }).click();
    await row.waitFor({ state: 'detached' });
    const refused = await fetch(`${osmand}&lat=52.5164&lon=13.3778`);
    assert.equal(refused.status, 401, 'a revoked token is refused');
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test("a device's track replays (issue #38): the empty state while the org keeps none, then the line, a slider moving the marker and a stop marked", async () => {
  const org = (await ok<{ orgs: { id: number; slug: string; primary: boolean }[] }>('GET', '/v1/orgs', undefined, owner)).orgs.find((o) => o.primary)!;
  const bike = await ok<{ id: number; token: string }>('POST', '/v1/devices', { name: 'Bike 7', org_id: org.id }, owner);
  const context = await signedInContext(browser, server, owner, { viewport: DESKTOP });
  const page = await context.newPage();
  const errors = watchErrors(page);

  // From the devices page; the org keeps no tracks yet, and the page says so.
  await page.goto(`${server.url}/app/devices`);
  await page.locator('[data-testid="device-row"]', { hasText: 'Bike 7' }).getByTestId('device-track').click();
  await page.waitForURL((u) => u.pathname === '/app/track' && u.searchParams.get('device') === String(bike.id));
  await page.getByTestId('track-empty').getByText('keeps no tracks').waitFor();
  assert.equal(await page.getByTestId('track-replay').count(), 0);

  // The org keeps tracks; the bike reports through the OsmAnd protocol: 6 fixes a minute apart going
  // north, 6 fixes two minutes apart within 10 m (a 10-minute stop), 6 more going on.
  await ok('PATCH', `/v1/orgs/${org.slug}`, { retention: { tracks_days: 7 } }, owner);
  const t0 = Math.floor(Date.now() / 1000) - 3 * 3600;
  const fixes: [number, number, number][] = [];
  for (let i = 0; i < 6; i++) fixes.push([t0 + i * 60, 52.5 + i * 0.0015, 13.4]);
  for (let i = 0; i < 6; i++) fixes.push([t0 + 360 + i * 120, 52.5 + 6 * 0.0015 + (i % 2) * 0.00005, 13.4 + (i % 3) * 0.00005]);
  for (let i = 1; i <= 6; i++) fixes.push([t0 + 360 + 600 + i * 60, 52.5 + 6 * 0.0015, 13.4 + i * 0.002]);
  for (const [ts, lat, lon] of fixes) {
    const res = await fetch(`${server.url}/v1/trackers/osmand?id=${bike.token}&lat=${lat}&lon=${lon}&timestamp=${ts}&hdop=1`);
    assert.equal(res.status, 200, await res.text());
  }
  // Positions are written once a second (BEACON_FLUSH_MS).
  for (let i = 0; ; i++) {
    const t = await ok<{ total_points: number }>('GET', `/v1/devices/${bike.id}/track?from=${new Date((t0 - 60) * 1000).toISOString()}`, undefined, owner);
    if (t.total_points === fixes.length) break;
    assert.ok(i < 100, `the track has ${t.total_points} of ${fixes.length} points`);
    await new Promise((r) => setTimeout(r, 100));
  }

  await page.getByTestId('track-show').click();
  await page.getByTestId('track-replay').waitFor();
  await page.waitForSelector('path.track-line');
  assert.match((await page.getByTestId('track-summary').textContent()) ?? '', /^18 points from .*; 1 stop\.$/);
  assert.equal(await page.locator('.track-stop[data-stop="1"]').count(), 1, 'the stop is marked on the map');
  assert.match((await page.getByTestId('track-stop').textContent()) ?? '', /^1Stop 1: .* to .* \(10 min\)/);

  // The slider moves the marker along the track, from the keyboard too; the time is shown.
  const where = async () => (await page.getByTestId('track-marker').boundingBox())!;
  const start = await where();
  const firstTime = await page.getByTestId('track-time').textContent();
  await page.getByTestId('track-slider').focus();
  await page.keyboard.press('End');
  await page.waitForFunction((was) => document.querySelector('[data-testid="track-time"]')?.textContent !== was, firstTime);
  const end = await where();
  assert.ok(Math.hypot(end.x - start.x, end.y - start.y) > 20, `the marker moved: ${JSON.stringify([start, end])}`);
  assert.equal(await page.getByTestId('track-slider').inputValue(), '17');
  await page.keyboard.press('Home');
  assert.equal(await page.getByTestId('track-time').textContent(), firstTime);
  // Choosing the stop puts the marker there.
  await page.getByTestId('track-stop').click();
  assert.equal(await page.getByTestId('track-slider').inputValue(), '6');
  await page.getByTestId('track-time').getByText('· stop 1').waitFor();
  assert.match((await page.getByTestId('track-slider').getAttribute('aria-valuetext')) ?? '', /point 7 of 18$/);
  await screenshot(page, 'track');
  // At phone width (the address keeps the device and the range).
  await page.setViewportSize(PHONE);
  await page.reload();
  await page.getByTestId('track-replay').waitFor();
  await page.waitForSelector('path.track-line');
  await screenshot(page, 'track');
  await noHorizontalOverflow(page);
  assert.deepEqual(errors, []);
  await context.close();
});
