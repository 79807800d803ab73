/// <reference lib="dom" />
// The dashboard's Devices view (issue #17): a dispatcher adds a tracker app, is shown its token,
// its four URLs and OwnTracks' configuration QR code once; the app's first fix (OsmAnd protocol,
// as Traccar Client sends it) shows the device beaconing with its position, the list never shows
// the token again, and revoking it takes it off the list and turns its URL into a 401.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import qrcode from 'qrcode-generator';
import { type ApiUser, browser, browserSuite, DESKTOP, noHorizontalOverflow, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';

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
