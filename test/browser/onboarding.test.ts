/// <reference lib="dom" />
// Day one of a team (issue 20): a dispatcher invites a worker, who registers through the emailed
// link on a phone, opens /field, starts the beacon, and the dispatcher sees it on the map; the
// admin page; /field's default org; the key form's live default and "View test data"; feedback
// in view on /field and stale states that clear; a photo attached to an assigned incident
// (issue 15); the skip link and /field's heading. Every screenshot also runs axe-core (harness).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { type ApiUser, browser, browserSuite, call, DESKTOP, ok, PHONE, screenshot, server, signedInContext, signUp, uniqueEmail, watchErrors } from './harness.js';

const HERE = { latitude: 52.52, longitude: 13.405, accuracy: 12 };
const VIEWPORTS = [
  ['phone', PHONE],
  ['desktop', DESKTOP],
] as const;

/** The first account of the instance: its admin. */
let admin: ApiUser;
browserSuite({
  setUp: async () => {
    admin = await signUp(server, { name: 'Ada Admin' });
  },
});

async function waitFor<T>(f: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The invite link emailed to `email` (the server logs emails without SMTP). */
const inviteLink = (email: string) =>
  waitFor(() => {
    const line = server
      .output()
      .split('\n')
      .filter((l) => l.includes(email) && l.includes('/invites/'))
      .pop();
    return line ? /\/invites\/[A-Za-z0-9_-]+/.exec(line)?.[0] : undefined;
  }, `the invite email to ${email}`);

/** A dispatcher with an agency plan and a shared org. */
async function dispatcherWithOrg(name: string, orgName: string): Promise<{ dispatcher: ApiUser; org: { id: number; slug: string; name: string } }> {
  const dispatcher = await signUp(server, { name });
  await ok('PATCH', `/v1/users/${dispatcher.id}`, { plan: 'agency' }, admin);
  const org = await ok<{ id: number; slug: string; name: string }>('POST', '/v1/orgs', { name: orgName }, dispatcher);
  return { dispatcher, org };
}

async function noSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `page scrolls sideways by ${overflow}px`);
}

test('an invited worker registers through the emailed link on a phone, opens /field, starts the beacon, and the inviting dispatcher sees it on the map', async () => {
  const { dispatcher, org } = await dispatcherWithOrg('Dina Dispatch', 'Rescue North');
  const email = uniqueEmail('worker');
  const invited = await ok<{ invited: boolean }>('POST', `/v1/orgs/${org.slug}/members`, { email, role: 'member' }, dispatcher);
  assert.equal(invited.invited, true);
  const link = await inviteLink(email);

  // The dispatcher's map is open before the worker exists.
  const desk = await signedInContext(browser, server, dispatcher, { viewport: DESKTOP });
  const map = await desk.newPage();
  const mapErrors = watchErrors(map);
  await map.goto(server.url + '/app/signals');
  await map.waitForSelector('[data-testid="live-state"].live-live');

  const phone = await browser.newContext({ viewport: PHONE, permissions: ['geolocation'], geolocation: HERE });
  const page = await phone.newPage();
  const errors = watchErrors(page);
  await page.goto(server.url + link);
  await page.waitForSelector('[data-testid="invite-register-form"]');
  assert.match((await page.textContent('[data-testid="invite-offer"]')) ?? '', new RegExp(`Rescue North invites ${email.replace(/[.+]/g, '\\$&')} to join as a member`));
  assert.equal(await page.inputValue('#invite-email'), email);
  await noSidewaysScroll(page);
  await screenshot(page, 'invite-register');
  await page.fill('#invite-name', 'Walt Worker');
  await page.fill('#invite-password', 'correct horse battery');
  await page.click('[data-testid="invite-submit"]');
  await page.waitForSelector('[data-testid="invite-joined"]');
  assert.match((await page.textContent('[data-testid="invite-joined"]')) ?? '', /member of Rescue North/);
  await screenshot(page, 'invite-joined');

  await page.click('[data-testid="invite-open-field"]');
  await page.waitForURL((u) => u.pathname === '/field');
  await page.waitForSelector('[data-testid="beacon-toggle"]');
  // Two orgs (personal and Rescue North): the terminal sends to the one of the invite.
  assert.equal(await page.inputValue('[data-testid="org-select"]'), String(org.id));
  assert.match((await page.textContent('[data-testid="beacon-org"]')) ?? '', /Goes to Rescue North/);
  assert.equal(await page.locator('h1').count(), 1);
  const device = await page.evaluate(() => localStorage.getItem('muster-device-id'));
  await page.click('[data-testid="beacon-toggle"]');
  await page.waitForSelector('[data-testid="beacon-status"][data-state="on"]');
  assert.match((await page.textContent('[data-testid="beacon-org"]')) ?? '', /Received by Rescue North/);
  await screenshot(page, 'invite-field-beacon');

  // The dispatcher sees the worker's device appear, from the stream, without a reload.
  await map.waitForSelector(`[data-testid="beacon-row"][data-device-id="${device}"]`);
  assert.match((await map.textContent(`[data-testid="beacon-row"][data-device-id="${device}"]`)) ?? '', /Walt Worker/);
  await screenshot(map, 'invite-dispatcher-map');

  // The worker is a proven member of the org, through the link alone.
  const members = await ok<{ members: { email: string; role: string }[] }>('GET', `/v1/orgs/${org.slug}/members`, undefined, dispatcher);
  assert.ok(members.members.some((m) => m.email === email && m.role === 'member'));
  await page.click('[data-testid="beacon-toggle"]');
  await page.waitForSelector('[data-testid="beacon-status"][data-state="off"]');
  // Only the 401 of "who is signed in?" before registering.
  assert.deepEqual(
    errors.filter((e) => !e.includes('401')),
    [],
  );
  assert.deepEqual(mapErrors, []);
  await phone.close();
  await desk.close();
});

test('an invite to an existing (unproven) account: sign in on the page and join; a wrong or used link says so', async () => {
  const { dispatcher, org } = await dispatcherWithOrg('Dan Dispatch', 'Harbour Team');
  const email = uniqueEmail('existing');
  assert.equal((await call(server, 'POST', '/v1/users', { email, password: 'correct horse battery', name: 'Erin Existing' })).status, 201);
  await ok('POST', `/v1/orgs/${org.slug}/members`, { email, role: 'admin' }, dispatcher);
  const link = await inviteLink(email);
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(server.url + link);
  await page.waitForSelector('[data-testid="invite-register-form"]');
  await page.getByRole('tab', { name: 'I have an account' }).click();
  await page.waitForSelector('[data-testid="invite-signin-form"]');
  await page.fill('#invite-password', 'wrong password!');
  await page.click('[data-testid="invite-submit"]');
  await page.waitForSelector('.alert.error');
  assert.match((await page.textContent('.alert.error')) ?? '', /Wrong password/);
  await screenshot(page, 'invite-signin');
  await page.fill('#invite-password', 'correct horse battery');
  await page.click('[data-testid="invite-submit"]');
  await page.waitForSelector('[data-testid="invite-joined"]');
  assert.match((await page.textContent('[data-testid="invite-joined"]')) ?? '', /admin of Harbour Team/);
  const me = await page.evaluate(() => fetch('/v1/auth/me').then((r) => r.json() as Promise<{ email_verified: boolean }>));
  assert.equal(me.email_verified, true);

  // The link is used up: opening it again says so instead of a JSON 404.
  await page.goto(server.url + link);
  await page.waitForSelector('[data-testid="invite-invalid"]');
  await screenshot(page, 'invite-invalid');
  assert.deepEqual(
    errors.filter((e) => !e.includes('404') && !e.includes('401')),
    [],
  );
  await context.close();
});

test('/field defaults to the shared org, never the personal one, when nothing was chosen; the choice is then remembered', async () => {
  const { dispatcher, org } = await dispatcherWithOrg('Dee Dispatch', 'Mountain Rescue');
  const worker = await signUp(server, { name: 'Mia Member' });
  await ok('POST', `/v1/orgs/${org.slug}/members`, { email: worker.email, role: 'member' }, dispatcher);
  for (const [, viewport] of VIEWPORTS) {
    const context = await signedInContext(browser, server, worker, { viewport, permissions: ['geolocation'], geolocation: HERE });
    const page = await context.newPage();
    await page.goto(server.url + '/field');
    await page.waitForSelector('[data-testid="org-select"]');
    assert.equal(await page.inputValue('[data-testid="org-select"]'), String(org.id));
    assert.match((await page.textContent('[data-testid="beacon-org"]')) ?? '', /Goes to Mountain Rescue/);
    await screenshot(page, 'field-default-org');
    const personal = (await ok<{ orgs: { id: number; personal: boolean }[] }>('GET', '/v1/orgs', undefined, worker)).orgs.find((o) => o.personal)!;
    await page.selectOption('[data-testid="org-select"]', String(personal.id));
    await page.reload();
    await page.waitForSelector('[data-testid="org-select"]');
    assert.equal(await page.inputValue('[data-testid="org-select"]'), String(personal.id), 'the last used org wins');
    assert.match((await page.textContent('[data-testid="beacon-org"]')) ?? '', /your personal org/);
    await context.close();
  }
});

test('admin page: users, plans and verification; reached from the upgrade message', async () => {
  const unproven = uniqueEmail('unproven');
  const created = await call<{ id: number }>(server, 'POST', '/v1/users', { email: unproven, password: 'correct horse battery', name: 'Uma Unproven' });
  assert.equal(created.status, 201);
  for (const [kind, viewport] of VIEWPORTS) {
    // A fresh admin on the free plan meets the upgrade message first, with the way to the admin page.
    await ok('PATCH', `/v1/users/${admin.id}`, { plan: 'free' }, admin);
    const context = await signedInContext(browser, server, admin, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(server.url + '/app/orgs');
    await page.click('[data-testid="new-org"]');
    await page.fill('#org-name', `Org ${kind}`);
    await page.click('form:has(#org-name) button[type="submit"]');
    await page.waitForSelector('[data-testid="upgrade-required"], .alert.error');
    assert.equal(await page.locator('[data-testid="upgrade-required"]').count(), 1, (await page.locator('.alert.error').allTextContents()).join(' '));
    await screenshot(page, 'admin-upgrade-message');
    await page.click('[data-testid="upgrade-admin-link"]');
    await page.waitForURL((u) => u.pathname === '/app/admin');
    const row = page.locator(`[data-testid="admin-user"][data-email="${admin.email}"]`);
    await row.waitFor();
    await noSidewaysScroll(page);
    await screenshot(page, 'admin-users');
    const plan = kind === 'phone' ? 'agency' : 'enterprise';
    await row.locator('[data-testid="admin-plan"]').selectOption(plan);
    await row.locator('[data-testid="admin-saved"]').waitFor();
    assert.equal((await ok<{ plan: string }>('GET', '/v1/auth/me', undefined, admin)).plan, plan);
    assert.deepEqual(
      errors.filter((e) => !e.includes('403')),
      [],
    );
    await context.close();
  }
  const context = await signedInContext(browser, server, admin, { viewport: DESKTOP });
  const page = await context.newPage();
  await page.goto(server.url + '/app/admin');
  const row = page.locator(`[data-testid="admin-user"][data-email="${unproven}"]`);
  await row.locator('[data-testid="admin-unverified"]').waitFor();
  await row.locator('[data-testid="admin-verify"]').click();
  await row.locator('[data-testid="admin-verified"]').waitFor();
  const users = await ok<{ users: { email: string; email_verified: boolean }[] }>('GET', '/v1/users?limit=200', undefined, admin);
  assert.equal(users.users.find((u) => u.email === unproven)?.email_verified, true);
  await context.close();

  // Not an admin: no menu entry, and the page says whom to ask.
  const member = await signUp(server, { name: 'Nora Normal' });
  const other = await signedInContext(browser, server, member, { viewport: PHONE });
  const p2 = await other.newPage();
  await p2.goto(server.url + '/app/admin');
  await p2.waitForSelector('text=For instance administrators');
  assert.equal(await p2.locator('a[href="/app/admin"]').count(), 0);
  await other.close();
});

test('the key form defaults to live; "View test data" shows test-mode records, clearly marked; a skip link leads to the content', async () => {
  const user = await signUp(server, { name: 'Tess Tester' });
  const testKey = await call<{ key: string }>(server, 'POST', '/v1/api-keys', { name: 'sandbox', mode: 'test' }, user.cookie);
  assert.equal(testKey.status, 201);
  const made = await fetch(server.url + '/v1/tickets', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': testKey.body.key }, body: JSON.stringify({ title: 'Sandbox incident' }) });
  assert.equal(made.status, 201);
  await ok('POST', '/v1/tickets', { title: 'Real incident' }, user);
  for (const [, viewport] of VIEWPORTS) {
    const context = await signedInContext(browser, server, user, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(server.url + '/app/settings');
    await page.waitForSelector('[data-testid="key-mode"]');
    assert.equal(await page.inputValue('[data-testid="key-mode"]'), 'live');

    // The skip link is the first tab stop and moves focus to the content.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');

    await page.goto(server.url + '/app/incidents');
    await page.waitForSelector('[data-testid="incident-row"]');
    assert.deepEqual(await page.locator('[data-testid="incident-row"]').allTextContents().then((t) => t.map((s) => s.includes('Sandbox'))), [false]);
    if (viewport === PHONE) await page.click('.menu-button');
    await page.locator('[data-testid="test-data-switch"] input').check();
    await page.waitForSelector('[data-testid="test-data-banner"]');
    await page.waitForSelector('[data-testid="incident-row"]');
    const rows = await page.locator('[data-testid="incident-row"]').allTextContents();
    assert.equal(rows.length, 1);
    assert.match(rows[0]!, /Sandbox incident/);
    await screenshot(page, 'test-data-on');
    if (viewport === PHONE) await page.click('.menu-button');
    await page.locator('[data-testid="test-data-switch"] input').uncheck();
    await page.waitForSelector('[data-testid="incident-row"]');
    assert.equal(await page.locator('[data-testid="test-data-banner"]').count(), 0);
    assert.match((await page.locator('[data-testid="incident-row"]').allTextContents())[0]!, /Real incident/);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('/field: a sent note is confirmed in view wherever the page is scrolled; Offline and "Beacon not sent" clear as soon as they stop being true', async () => {
  const user = await signUp(server, { name: 'Fern Feedback' });
  for (const [, viewport] of VIEWPORTS) {
    const context = await signedInContext(browser, server, user, { viewport, permissions: ['geolocation'], geolocation: HERE });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.clock.install();
    await page.goto(server.url + '/field');
    await page.waitForSelector('[data-testid="beacon-toggle"]');
    await page.fill('[data-testid="note-text"]', 'Fence down at the north gate');
    await page.locator('[data-testid="note-send"]').scrollIntoViewIfNeeded();
    await page.click('[data-testid="note-send"]');
    const flash = page.locator('[data-testid="flash"]');
    await flash.filter({ hasText: 'Note sent.' }).waitFor();
    const box = (await flash.boundingBox())!;
    assert.ok(box.y >= 0 && box.y + box.height <= viewport.height, `the confirmation is on screen (y=${box.y}, height=${box.height})`);
    await screenshot(page, 'field-feedback');

    // Offline: the badge says so, and a beacon that cannot be sent says that; back online, both clear at once.
    await page.click('[data-testid="beacon-toggle"]');
    await page.waitForSelector('[data-testid="beacon-status"][data-state="on"]');
    await page.waitForSelector('[data-testid="beacon-last-sent"]:not(:has-text("not yet"))');
    await context.setOffline(true);
    await page.waitForSelector('[data-testid="connection"].offline');
    // The next beacon, due at the 30 s tick (the page's clock is Playwright's: jump to it), fails.
    await page.clock.fastForward(31_000);
    await page.waitForSelector('[data-testid="beacon-error"]');
    assert.match((await page.textContent('[data-testid="beacon-error"]')) ?? '', /Beacon not sent/);
    await screenshot(page, 'field-offline');
    await context.setOffline(false);
    await page.waitForSelector('[data-testid="connection"].online');
    await page.waitForSelector('[data-testid="beacon-error"]', { state: 'detached' });
    await page.click('[data-testid="beacon-toggle"]');
    await page.waitForSelector('[data-testid="beacon-status"][data-state="off"]');
    assert.deepEqual(
      errors.filter((e) => !/Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(e)),
      [],
    );
    await context.close();
  }
});

test('a responder attaches a photo to an assigned incident from /field; it lands on the incident timeline', async () => {
  const { dispatcher, org } = await dispatcherWithOrg('Dora Desk', 'Fire Crew');
  const responder = await signUp(server, { name: 'Rita Responder' });
  await ok('POST', `/v1/orgs/${org.slug}/members`, { email: responder.email, role: 'member' }, dispatcher);
  const jpeg = await sharp({ create: { width: 2400, height: 1600, channels: 3, background: { r: 200, g: 80, b: 40 } } })
    .jpeg()
    .toBuffer();
  for (const [kind, viewport] of VIEWPORTS) {
    const incident = await ok<{ Id: number }>('POST', '/v1/tickets', { title: `Smoke in the depot (${kind})`, priority: 'high', org_id: org.id, lat: 52.52, lng: 13.4 }, dispatcher);
    await ok('PATCH', `/v1/tickets/${incident.Id}`, { assignee_id: responder.id }, dispatcher);
    const context = await signedInContext(browser, server, responder, { viewport, permissions: ['geolocation'], geolocation: HERE });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(server.url + '/field');
    const card = page.locator(`[data-testid="my-incident"][data-id="${incident.Id}"]`);
    await card.waitFor();
    await card.locator('[data-testid="my-photo-input"]').setInputFiles({ name: 'depot.jpg', mimeType: 'image/jpeg', buffer: jpeg });
    await card.locator('[data-testid="my-photo-thumb"]').waitFor();
    await card.locator('[data-testid="my-photo-caption"]').fill('Smoke from the east door');
    await screenshot(page, 'field-incident-photo');
    await card.locator('[data-testid="my-photo-send"]').click();
    await page.locator('[data-testid="flash"]').filter({ hasText: 'Photo for the incident sent.' }).waitFor();
    const timeline = await waitFor(async () => {
      const t = await ok<{ events: { type: string; data: { type?: string; image_url?: string | null; note?: string | null } }[] }>('GET', `/v1/tickets/${incident.Id}/timeline`, undefined, dispatcher);
      return t.events.find((e) => e.type === 'signal' && e.data.image_url) ? t : undefined;
    }, 'the photo on the timeline');
    const photo = timeline.events.find((e) => e.type === 'signal' && e.data.image_url)!;
    assert.equal(photo.data.note, 'Smoke from the east door');
    const img = await fetch(photo.data.image_url!);
    assert.equal(img.status, 200);
    const meta = await sharp(Buffer.from(await img.arrayBuffer())).metadata();
    assert.equal(Math.max(meta.width, meta.height), 1280, 'resized on the phone before upload');
    assert.deepEqual(errors, []);
    await context.close();

    // Issue 33: the dispatcher sees the picture itself, on the timeline and the incident page,
    // as a thumbnail that opens the whole picture.
    const desk = await signedInContext(browser, server, dispatcher, { viewport });
    const dash = await desk.newPage();
    const dashErrors = watchErrors(dash);
    await dash.goto(`${server.url}/app/incidents/${incident.Id}`);
    const onTimeline = dash.locator('[data-testid="timeline-event"][data-type="signal"] [data-testid="photo-thumb"]');
    await onTimeline.waitFor();
    assert.match((await dash.locator('[data-testid="timeline-event"][data-type="signal"]').textContent()) ?? '', /Photo: Smoke from the east door/);
    assert.equal(await dash.locator('[data-testid="incident-photos"] [data-testid="photo-thumb"]').count(), 1);
    // Thumbnails load lazily, as they come into view.
    for (const thumb of await dash.locator('[data-testid="photo-thumb"] img').all()) {
      await thumb.scrollIntoViewIfNeeded();
      await dash.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0, await thumb.elementHandle());
    }
    await screenshot(dash, 'incident-photo-thumbs');
    await onTimeline.click();
    const full = dash.locator('[data-testid="photo-dialog"][open] [data-testid="photo-full"]');
    await full.waitFor();
    await dash.waitForFunction(() => (document.querySelector<HTMLImageElement>('[data-testid="photo-dialog"][open] [data-testid="photo-full"]')?.naturalWidth ?? 0) === 1280);
    assert.equal(await full.getAttribute('alt'), 'Smoke from the east door');
    await screenshot(dash, 'incident-photo-enlarged');
    await dash.keyboard.press('Escape');
    await dash.waitForSelector('[data-testid="photo-dialog"][open]', { state: 'detached' });
    assert.deepEqual(dashErrors, []);
    await desk.close();
  }
});

test('integrations page: the org is chosen, with the priority map and the default assignee; the key and URLs are shown once; revoke; its incidents name the integration and the tool', async () => {
  const { dispatcher, org } = await dispatcherWithOrg('Ines Integrator', 'Water Works');
  const crew = await signUp(server, { name: 'Carl Crew' });
  await ok('POST', `/v1/orgs/${org.slug}/members`, { email: crew.email, role: 'member' }, dispatcher);
  for (const [kind, viewport] of VIEWPORTS) {
    const context = await signedInContext(browser, server, dispatcher, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/app/integrations`);
    await page.waitForSelector('[data-testid="new-integration"]');
    await page.fill('#integration-name', `Prometheus ${kind}`);
    // The org is never guessed: without a choice the form says to choose.
    await page.click('[data-testid="integration-submit"]');
    await page.waitForSelector('#err-org_id');
    await page.selectOption('[data-testid="integration-org"]', String(org.id));
    await page.waitForSelector(`[data-testid="integration-assignee"] option[value="${crew.id}"]`, { state: 'attached' });
    await page.selectOption('[data-testid="integration-assignee"]', String(crew.id));
    await page.selectOption('[data-testid="integration-map-warning"]', 'high');
    await screenshot(page, 'integrations-form');
    await page.click('[data-testid="integration-submit"]');
    await page.waitForSelector('[data-testid="integration-created"]');
    const key = ((await page.textContent('[data-testid="integration-key"]')) ?? '').trim();
    assert.match(key, /^[A-Za-z0-9_-]{32}$/);
    const alertmanagerUrl = ((await page.textContent('[data-testid="integration-alertmanager_url"]')) ?? '').trim();
    assert.equal(alertmanagerUrl, `${server.url}/v1/integrations/${key}/alertmanager`);
    assert.ok(((await page.textContent('[data-testid="integration-grafana_url"]')) ?? '').includes(key));
    assert.ok(((await page.textContent('[data-testid="integration-events_url"]')) ?? '').includes(key));
    await screenshot(page, 'integrations-created');
    await page.click('[data-testid="integration-saved"]');
    const row = page.locator('[data-testid="integration-row"]', { hasText: `Prometheus ${kind}` });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', new RegExp(`Water Works · key \\.\\.\\.${key.slice(-4)}.*Warning → High`));
    assert.ok(!((await page.content()).includes(key)), 'the key is shown once only');
    await screenshot(page, 'integrations-list');

    // Alertmanager posts to the URL: the incident is the org's, mapped and assigned as chosen, and named.
    const posted = await fetch(alertmanagerUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: '4', status: 'firing', receiver: 'muster', groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://alertmanager.example.com', alerts: [{ status: 'firing', labels: { alertname: 'DiskFull', severity: 'warning', instance: `db-${kind}` }, annotations: { summary: `Disk full on db-${kind}` }, startsAt: new Date().toISOString(), fingerprint: `fp-ui-${kind}` }] }),
    });
    assert.equal(posted.status, 200, await posted.text());
    const [incident] = (await ok<{ tickets: { Id: number; priority: string; assignee_id: number | null; org_id: number }[] }>('GET', `/v1/tickets?source_ref=fp-ui-${kind}`, undefined, dispatcher)).tickets;
    assert.deepEqual([incident?.priority, incident?.assignee_id, incident?.org_id], ['high', crew.id, org.id]);
    await ok('POST', '/v1/signals', { type: 'alert', note: `A field alert (${kind})`, org_id: org.id }, crew);
    await page.goto(`${server.url}/app/incidents?source=integration`);
    const listed = page.locator(`[data-testid="incident-row"][data-id="${incident!.Id}"]`);
    await listed.waitFor();
    assert.equal(await listed.locator('[data-testid="incident-row-source"]').textContent(), `Alertmanager · Prometheus ${kind}`);
    assert.ok(!(await page.locator('[data-testid="incident-row"]').allTextContents()).some((t) => t.includes(`A field alert (${kind})`)), 'a field alert is not an integration');
    assert.equal(await page.inputValue('#f-source'), 'integration');
    await screenshot(page, 'integrations-incident-list');
    await listed.click();
    await page.waitForSelector('[data-testid="timeline-event"][data-type="created"]');
    assert.match((await page.textContent('[data-testid="incident-source"]')) ?? '', new RegExp(`^Alertmanager · Prometheus ${kind} \\(fp-ui-${kind}\\)`));
    assert.match((await page.textContent('[data-testid="timeline-event"][data-type="created"]')) ?? '', new RegExp(`Opened \\(high, from Alertmanager · Prometheus ${kind}\\)`));
    await screenshot(page, 'integrations-incident');

    // Revoked from the list (after a confirmation): its URLs answer 401.
    await page.goto(`${server.url}/app/integrations`);
    page.once('dialog', (d) => void d.accept());
    await page.locator('[data-testid="integration-row"]', { hasText: `Prometheus ${kind}` }).locator('[data-testid="integration-revoke"]').click();
    await page.waitForSelector('[data-testid="integration-revoked"]');
    assert.equal((await fetch(alertmanagerUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 401);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test("the org's page: dispatch settings (acknowledgement timeouts); a new team has its creator; a team event type made in the dashboard, with its routing, and every event type's Share panel", async () => {
  const { dispatcher, org } = await dispatcherWithOrg('Tara Teams', 'Coast Guard');
  const mate = await signUp(server, { name: 'Mo Mate' });
  await ok('POST', `/v1/orgs/${org.slug}/members`, { email: mate.email, role: 'member' }, dispatcher);
  for (const [kind, viewport] of VIEWPORTS) {
    const context = await signedInContext(browser, server, dispatcher, { viewport });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/app/orgs/${org.slug}`);
    await page.waitForSelector('[data-testid="ack-urgent"]');
    await page.fill('[data-testid="ack-urgent"]', kind === 'phone' ? '10' : '12');
    await page.fill('[data-testid="ack-high"]', '');
    await page.click('[data-testid="dispatch-settings-save"]');
    await page.waitForSelector('[data-testid="dispatch-settings-saved"]');
    assert.deepEqual((await ok<{ ack_timeout_minutes: unknown }>('GET', `/v1/orgs/${org.slug}/dispatch`, undefined, dispatcher)).ack_timeout_minutes, { urgent: kind === 'phone' ? 10 : 12, high: null });
    await page.fill('[data-testid="ack-urgent"]', '5000');
    await page.click('[data-testid="dispatch-settings-save"]');
    await page.waitForSelector('#err-ack_timeout_minutes\\.urgent');
    await screenshot(page, 'org-dispatch-settings');

    // A team made here has its maker in its rotation.
    await page.fill('#team-name', `Night Desk ${kind}`);
    await page.click('form:has(#team-name) button[type="submit"]');
    await page.waitForSelector('[data-testid="team-created"]');
    assert.match((await page.textContent('[data-testid="team-created"]')) ?? '', /You are a member, in its rotation/);
    await page.locator('.team-head', { hasText: `Night Desk ${kind}` }).click();
    await page.click('[data-testid="new-team-event-type"]');
    await page.waitForSelector('[data-testid="et-owner-routing"]');
    assert.match((await page.textContent('[data-testid="et-owner-routing"]')) ?? '', new RegExp(`A member of Night Desk ${kind} is booked, chosen by round robin`));
    await page.fill('#et-name', `Harbour visit ${kind}`);
    await screenshot(page, 'team-event-type-new');
    await page.click('[data-testid="save-event-type"]');
    await page.waitForSelector('[data-testid="share-panel"]');
    const link = ((await page.textContent('[data-testid="share-link"]')) ?? '').trim();
    const teamSlug = `night-desk-${kind}`;
    assert.equal(link, `${server.url}/book/${org.slug}/${teamSlug}/harbour-visit-${kind}`);
    assert.equal(await page.inputValue('[data-testid="share-snippet"]'), `<div data-muster-booking="/book/${org.slug}/${teamSlug}/harbour-visit-${kind}"></div>\n<script src="${server.url}/embed.js" async></script>`);
    assert.match((await page.textContent('[data-testid="et-team-info"]')) ?? '', new RegExp(`Team event type of Night Desk ${kind} \\(Coast Guard\\): routing round robin`));
    // The live preview is the booking page itself, embedded.
    const preview = page.frameLocator('[data-testid="share-preview"]');
    await preview.locator('h1', { hasText: `Harbour visit ${kind}` }).waitFor();
    await screenshot(page, 'team-event-type-share');
    const types = await ok<{ event_types: { name: string; team_id: number | null }[] }>('GET', '/v1/event-types', undefined, dispatcher);
    assert.ok(types.event_types.find((t) => t.name === `Harbour visit ${kind}`)?.team_id);

    // The list's Share opens the same panel for any event type.
    await page.goto(`${server.url}/app/event-types`);
    const item = page.locator('[data-testid="event-type-row"]', { hasText: `Harbour visit ${kind}` });
    await item.locator('[data-testid="share-toggle"]').click();
    await item.locator('[data-testid="share-panel"]').waitFor();
    assert.equal(await item.locator('[data-testid="share-snippet"]').inputValue(), `<div data-muster-booking="/book/${org.slug}/${teamSlug}/harbour-visit-${kind}"></div>\n<script src="${server.url}/embed.js" async></script>`);
    await screenshot(page, 'event-types-share');
    // The one error is the 422 of the out-of-range timeout, said on the form.
    assert.deepEqual(errors.filter((e) => !e.includes('status of 422')), []);
    await context.close();
  }
});
