/// <reference lib="dom" />
// The field terminal at /field, end to end in headless Chromium on a server started from the
// build: a beacon reaches the dashboard map through the stream and leaves it on stop; a large
// photo is resized in the browser before upload; an alert written offline is replayed exactly
// once, even when the answer to a send is lost and it is sent again; notifications are offered on
// the first visit, and the alert screen says who an alert reaches and how (issue 33).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { type ApiUser, browser, browserSuite, call, DESKTOP, launchBrowser, PHONE, screenshot, server, signedInContext, signUp, watchErrors } from './harness.js';
import { browserKeys } from '../peers.js';

const HERE = { latitude: 52.52, longitude: 13.405, accuracy: 12 };

browserSuite();

async function fieldContext(user: ApiUser, viewport: { width: number; height: number } = PHONE): Promise<BrowserContext> {
  return signedInContext(browser, server, user, { viewport, permissions: ['geolocation'], geolocation: HERE });
}

async function openField(context: BrowserContext): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors = watchErrors(page);
  await page.goto(server.url + '/field');
  await page.waitForSelector('[data-testid="beacon-toggle"]');
  return { page, errors };
}

interface StoredSignal {
  Id: number;
  type: string;
  note: string | null;
  image_url: string | null;
  lat: number | null;
  meta: { device_id?: string };
}

async function signals(user: ApiUser, type: string): Promise<StoredSignal[]> {
  const res = await call<{ signals: StoredSignal[] }>(server, 'GET', `/v1/signals?type=${type}&limit=100`, undefined, user.cookie);
  assert.equal(res.status, 200);
  return res.body.signals;
}

/** The outbox as IndexedDB holds it (not what the page shows). */
async function storedQueue(page: Page): Promise<{ id: string; status: string; body: { type: string; note?: string } }[]> {
  return page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open('muster-field', 1);
        open.onerror = () => reject(open.error ?? new Error('open failed'));
        open.onsuccess = () => {
          const req = open.result.transaction('queue', 'readonly').objectStore('queue').getAll();
          req.onsuccess = () => {
            open.result.close();
            resolve(req.result);
          };
          req.onerror = () => reject(req.error ?? new Error('read failed'));
        };
      }),
  );
}

test('unauthenticated: /field sends the visitor to the dashboard login, which comes back to /field', async () => {
  const user = await signUp(server, { name: 'Lena Login' });
  const page = await browser.newPage();
  // The page sends itself on to the login at once: wait for the first response only, or that
  // redirect aborts the navigation goto() is still waiting on (ERR_ABORTED on a busy machine).
  await page.goto(server.url + '/field', { waitUntil: 'commit' });
  await page.waitForURL((url) => url.pathname.startsWith('/app'));
  assert.equal(new URL(page.url()).searchParams.get('next'), '/field');
  await page.fill('#login-email', user.email);
  await page.fill('#login-password', user.password);
  await page.click('[data-testid="login-form"] button[type="submit"]');
  await page.waitForURL((url) => url.pathname === '/field');
  assert.equal(await page.textContent('[data-testid="user-name"]'), 'Lena Login');
  await page.close();
});

test('installable: the page links a manifest that starts at /field, with icons, and /sw.js is a worker allowed to fetch this origin', async () => {
  const html = await (await fetch(server.url + '/field')).text();
  assert.match(html, /<link rel="manifest" href="\/field.webmanifest"/);
  const res = await fetch(server.url + '/field.webmanifest');
  assert.equal(res.status, 200);
  const manifest = (await res.json()) as { name: string; short_name: string; start_url: string; scope: string; display: string; icons: { src: string; sizes: string }[] };
  assert.deepEqual([manifest.name, manifest.short_name, manifest.start_url, manifest.scope, manifest.display], ['Muster field terminal', 'Muster', '/field', '/', 'standalone']);
  for (const size of ['192x192', '512x512']) assert.ok(manifest.icons.some((i) => i.sizes === size), size);
  for (const icon of manifest.icons) assert.equal((await fetch(server.url + icon.src)).status, 200, icon.src);
  const sw = await fetch(server.url + '/sw.js');
  assert.equal(sw.status, 200);
  assert.match(sw.headers.get('content-type') ?? '', /javascript/);
  assert.match(sw.headers.get('content-security-policy') ?? '', /default-src 'self'/);
});

test('beacon: started on the field terminal it appears on the dashboard through the stream, and leaves on stop', async () => {
  const user = await signUp(server, { name: 'Fiona Field' });
  const context = await fieldContext(user, DESKTOP);
  const dashboard = await context.newPage();
  await dashboard.goto(server.url + '/app/signals');
  // The stream is connected and the first paint had no device: a row can only come from the stream.
  await dashboard.waitForSelector('[data-testid="live-state"].live-live');
  assert.equal(await dashboard.locator('[data-testid="beacon-row"]').count(), 0);

  const { page, errors } = await openField(context);
  const device = await page.evaluate(() => localStorage.getItem('muster-device-id'));
  assert.match(device ?? '', /^dev-[a-z0-9]{6}-[a-z0-9]{8}$/);
  assert.equal(await page.textContent('[data-testid="device-id"]'), device);
  assert.equal(await page.textContent('[data-testid="user-name"]'), 'Fiona Field');
  await screenshot(page, 'field-idle');

  const beaconSent = page.waitForResponse((r) => r.url().endsWith('/v1/signals') && r.request().method() === 'POST');
  await page.click('[data-testid="beacon-toggle"]');
  const first = await beaconSent;
  assert.equal(first.status(), 201);
  const sentBody = first.request().postDataJSON() as { type: string; lat: number; lng: number; meta: { device_id: string } };
  assert.equal(sentBody.type, 'beacon');
  assert.deepEqual([sentBody.lat, sentBody.lng, sentBody.meta.device_id], [HERE.latitude, HERE.longitude, device]);
  assert.equal(first.request().headers()['idempotency-key'], undefined, 'beacons are live-only, not queued');

  await dashboard.waitForSelector(`[data-testid="beacon-row"][data-device-id="${device}"]`);
  await page.waitForSelector('[data-testid="beacon-status"][data-state="on"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="beacon-last-sent"]')?.textContent !== 'not yet');
  await page.setViewportSize(PHONE);
  await screenshot(page, 'field-beacon-active');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'field-beacon-active');
  await screenshot(dashboard, 'field-dashboard-beacon');

  const stopped = page.waitForRequest((r) => r.url().endsWith('/v1/signals/beacon') && r.method() === 'DELETE');
  await page.click('[data-testid="beacon-toggle"]');
  assert.deepEqual((await stopped).postDataJSON(), { device_id: device });
  await dashboard.waitForSelector(`[data-testid="beacon-row"][data-device-id="${device}"]`, { state: 'detached' });
  await page.waitForSelector('[data-testid="beacon-status"][data-state="off"]');
  assert.deepEqual(errors, []);
  await context.close();
});

test('photo: a 4000x3000 picture is resized in the browser to 1280 px on its long side, uploaded, and posted as a capture', async () => {
  const user = await signUp(server, { name: 'Pia Photo' });
  const context = await fieldContext(user);
  const { page, errors } = await openField(context);
  await screenshot(page, 'field-idle');
  const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: { r: 40, g: 120, b: 200 } } })
    .composite([{ input: Buffer.from('<svg width="4000" height="3000"><circle cx="2000" cy="1500" r="1200" fill="orange"/></svg>') }])
    .jpeg({ quality: 95 })
    .toBuffer();

  const uploaded = page.waitForResponse((r) => r.url().endsWith('/v1/upload'));
  await page.setInputFiles('[data-testid="photo-input"]', { name: 'scene.jpg', mimeType: 'image/jpeg', buffer: big });
  await page.waitForSelector('[data-testid="photo-thumb"]');
  await page.fill('#photo-caption', 'Blocked road');
  await screenshot(page, 'field-photo-preview');
  await page.click('[data-testid="photo-send"]');
  assert.equal((await uploaded).status(), 201);
  await page.waitForSelector('[data-testid="flash"].success');

  const [capture] = await signals(user, 'capture');
  assert.ok(capture?.image_url, 'the capture signal carries the uploaded image');
  assert.equal(capture.note, 'Blocked road');
  assert.equal(capture.lat, HERE.latitude);
  const image = await fetch(capture.image_url);
  assert.equal(image.status, 200);
  const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
  assert.deepEqual([meta.width, meta.height], [1280, 960]);
  assert.deepEqual(await storedQueue(page), []);
  assert.deepEqual(errors, []);

  // Offline (the failed upload is logged by the browser), the resized JPEG itself waits in IndexedDB and is uploaded on reconnect.
  await context.setOffline(true);
  await page.setInputFiles('[data-testid="photo-input"]', { name: 'later.jpg', mimeType: 'image/jpeg', buffer: big });
  await page.click('[data-testid="photo-send"]');
  await page.waitForSelector('[data-testid="queue-item"][data-type="capture"][data-status="waiting"]');
  const held = await page.evaluate(
    () =>
      new Promise<number>((resolve, reject) => {
        const open = indexedDB.open('muster-field', 1);
        open.onerror = () => reject(open.error ?? new Error('open failed'));
        open.onsuccess = () => {
          const req = open.result.transaction('queue', 'readonly').objectStore('queue').getAll();
          req.onsuccess = () => resolve((req.result as { photo?: Blob }[])[0]?.photo?.size ?? 0);
        };
      }),
  );
  assert.ok(held > 0, 'the photo is stored with the queued capture');
  await context.setOffline(false);
  await page.waitForSelector('[data-testid="outbox"]', { state: 'detached' });
  const captures = await signals(user, 'capture');
  assert.equal(captures.length, 2);
  const later = await sharp(Buffer.from(await (await fetch(captures[0]!.image_url!)).arrayBuffer())).metadata();
  assert.equal(Math.max(later.width ?? 0, later.height ?? 0), 1280);
  await context.close();
});

test('wake lock: requested when the beacon starts, again each time the page becomes visible, released on stop', async () => {
  const user = await signUp(server);
  const context = await fieldContext(user);
  // Headless Chromium refuses screen wake locks, so the browser's API is stood in for here (the
  // page's own code runs unchanged): it counts requests and releases the lock when the page hides,
  // as browsers do.
  // (A string, so the test runner's transpiler adds nothing to it.)
  await context.addInitScript(`
    let visibility = 'visible';
    Object.defineProperty(document, 'visibilityState', { get: () => visibility });
    window.wakeRequests = 0;
    window.wakeHeld = 0;
    const held = new Set();
    window.setVisibility = (v) => {
      visibility = v;
      if (v === 'hidden') for (const s of [...held]) s.fire();
      document.dispatchEvent(new Event('visibilitychange'));
    };
    Object.defineProperty(navigator, 'wakeLock', {
      value: {
        request: () => {
          window.wakeRequests += 1;
          window.wakeHeld += 1;
          const listeners = [];
          const sentinel = {
            released: false,
            fire: () => {
              if (sentinel.released) return;
              sentinel.released = true;
              held.delete(sentinel);
              window.wakeHeld -= 1;
              listeners.forEach((fn) => fn());
            },
            release: () => Promise.resolve(sentinel.fire()),
            addEventListener: (_type, fn) => listeners.push(fn),
          };
          held.add(sentinel);
          return Promise.resolve(sentinel);
        },
      },
    });
  `);
  const { page } = await openField(context);
  const wake = () => page.evaluate(() => ({ requests: (window as unknown as { wakeRequests: number }).wakeRequests, held: (window as unknown as { wakeHeld: number }).wakeHeld }));
  const visibility = (v: 'hidden' | 'visible') => page.evaluate((state) => (window as unknown as { setVisibility(s: string): void }).setVisibility(state), v);

  await page.click('[data-testid="beacon-toggle"]');
  await page.waitForFunction(() => (window as unknown as { wakeHeld: number }).wakeHeld === 1);
  await page.waitForSelector('text=kept awake');
  await visibility('hidden');
  assert.deepEqual(await wake(), { requests: 1, held: 0 });
  await visibility('visible');
  await page.waitForFunction(() => (window as unknown as { wakeHeld: number }).wakeHeld === 1);
  assert.equal((await wake()).requests, 2);

  await page.click('[data-testid="beacon-toggle"]');
  await page.waitForSelector('[data-testid="beacon-status"][data-state="off"]');
  assert.equal((await wake()).held, 0, 'released on stop');
  await visibility('hidden');
  await visibility('visible');
  assert.equal((await wake()).requests, 2, 'not requested again once the beacon is off');
  await context.close();
});

test('location refused: the beacon does not start and the page explains how to allow it', async () => {
  const user = await signUp(server);
  const context = await signedInContext(browser, server, user, { viewport: PHONE });
  await context.grantPermissions([]);
  const { page } = await openField(context);
  await page.click('[data-testid="beacon-toggle"]');
  await page.waitForSelector('.help');
  await page.waitForSelector('[data-testid="beacon-status"][data-state="off"]');
  await screenshot(page, 'field-location-denied');
  await context.close();
});

test('offline: an alert needs a note, is queued in IndexedDB while offline and replayed exactly once, also when an answer is lost', async () => {
  const user = await signUp(server, { name: 'Otto Offline' });
  const context = await fieldContext(user);
  const { page } = await openField(context);
  // The service worker has cached the terminal's shell and controls the page.
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);

  // Client-side validation: no note, no alert.
  await page.click('[data-testid="alert-open"]');
  await page.click('[data-testid="alert-submit"]');
  await page.waitForSelector('#alert-error');

  await context.setOffline(true);
  await page.waitForSelector('[data-testid="connection"].offline');
  const note = `Fire at the north gate ${Date.now()}`;
  await page.fill('[data-testid="alert-note"]', note);
  await page.click('[data-testid="alert-submit"]');
  await page.waitForSelector('[data-testid="alert-confirm"]');
  await screenshot(page, 'field-alert-confirm');
  await page.click('[data-testid="alert-confirm"]');
  await page.waitForSelector('[data-testid="queue-count"][data-count="1"]');
  await page.waitForSelector('[data-testid="queue-item"][data-type="alert"][data-status="waiting"]');
  const queued = await storedQueue(page);
  assert.equal(queued.length, 1);
  assert.deepEqual([queued[0]!.body.type, queued[0]!.body.note], ['alert', note]);
  await screenshot(page, 'field-queued');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'field-queued');
  await page.setViewportSize(PHONE);

  // The outbox survives a reload (the shell comes from the service worker's cache offline).
  await page.reload();
  await page.waitForSelector('[data-testid="queue-item"][data-type="alert"]');
  assert.equal(await page.textContent('[data-testid="queue-count"]'), '1 waiting to send');
  assert.deepEqual(await signals(user, 'alert'), []);

  // Back online, the first send reaches the server but its answer is lost: the item must stay.
  let lost = 0;
  let answerLost!: () => void;
  const lostOnce = new Promise<void>((resolve) => (answerLost = resolve));
  const keys: string[] = [];
  await page.route('**/v1/signals', async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    keys.push(route.request().headers()['idempotency-key'] ?? '');
    const res = await route.fetch();
    assert.equal(res.status(), 201);
    lost += 1;
    await route.abort('connectionreset');
    answerLost();
  });
  await context.setOffline(false);
  await page.waitForFunction(() => document.querySelector('[data-testid="connection"]')?.classList.contains('online'));
  await lostOnce;
  await page.waitForSelector('[data-testid="queue-blocked"]');
  await page.waitForSelector('[data-testid="queue-item"][data-status="waiting"]');
  assert.equal(lost, 1, 'the replay sent the alert once and lost the answer');
  assert.equal((await signals(user, 'alert')).length, 1, 'the server has the alert');
  assert.equal((await storedQueue(page)).length, 1, 'without an answer the item stays queued');

  // The next replay sends it again with the same key: the server answers its stored 201.
  await page.unroute('**/v1/signals');
  const replayed = page.waitForResponse((r) => r.url().endsWith('/v1/signals') && r.request().method() === 'POST');
  await page.click('[data-testid="queue-send-now"]');
  const second = await replayed;
  assert.equal(second.status(), 201);
  assert.equal(second.headers()['idempotent-replayed'], 'true');
  assert.equal(second.request().headers()['idempotency-key'], keys[0]);
  await page.waitForSelector('[data-testid="outbox"]', { state: 'detached' });
  assert.deepEqual(await storedQueue(page), []);

  const alerts = (await signals(user, 'alert')).filter((s) => s.note === note);
  assert.equal(alerts.length, 1, 'exactly one alert, though it was sent twice');
  const cached = await page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) for (const req of await (await caches.open(name)).keys()) urls.push(new URL(req.url).pathname);
    return urls;
  });
  assert.ok(cached.includes('/field'), 'the shell is cached');
  assert.deepEqual(cached.filter((u) => u.startsWith('/v1/') || u.startsWith('/uploads/')), [], 'API answers are never cached');
  await context.close();
});

test("an outbox item is never sent under another account's session", async () => {
  const anna = await signUp(server, { name: 'Anna First' });
  const bert = await signUp(server, { name: 'Bert Second' });
  const context = await fieldContext(anna);
  const { page } = await openField(context);
  await context.setOffline(true);
  await page.fill('[data-testid="note-text"]', 'Written by Anna');
  await page.click('[data-testid="note-send"]');
  await page.waitForSelector('[data-testid="queue-item"][data-type="note"][data-status="waiting"]');

  // Bert signs in on the same phone (say, in another tab) while this page still shows Anna. Back
  // online, the replay finds Bert's session: the page switches to him and keeps Anna's note.
  await context.clearCookies();
  const [name, value] = bert.cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
  await context.setOffline(false);
  await page.waitForSelector('[data-testid="user-name"]:text("Bert Second")');
  await page.waitForSelector('[data-testid="queue-item"][data-type="note"][data-status="failed"]');
  assert.match((await page.textContent('[data-testid="queue-item"] .field-error')) ?? '', /another account/);
  await screenshot(page, 'field-failed-item');
  assert.deepEqual(await signals(bert, 'note'), []);
  assert.deepEqual(await signals(anna, 'note'), []);
  await context.close();
});

/**
 * Stands in for the browser's push service, which headless Chromium lacks: PushManager hands out a
 * subscription with real keys (the server checks them), remembered in local storage like a browser
 * keeps its subscription. Everything after it (the service worker, the POST of the subscription) is real.
 */
async function fakePushService(context: BrowserContext, endpoint: string): Promise<void> {
  await context.addInitScript(
    ({ endpoint, keys }) => {
      const sub = {
        endpoint,
        expirationTime: null,
        options: { userVisibleOnly: true, applicationServerKey: null },
        toJSON: () => ({ endpoint, expirationTime: null, keys }),
        getKey: () => null,
        unsubscribe: () => (localStorage.removeItem('test-push-subscription'), Promise.resolve(true)),
      } as unknown as PushSubscription;
      PushManager.prototype.subscribe = () => (localStorage.setItem('test-push-subscription', '1'), Promise.resolve(sub));
      PushManager.prototype.getSubscription = () => Promise.resolve(localStorage.getItem('test-push-subscription') ? sub : null);
    },
    { endpoint, keys: browserKeys().json },
  );
}

test('notifications are offered on the first visit to /field and to the dashboard; the alert screen says who will be told, and how; the alert goes by push and by email', async (t) => {
  // The full browser: the headless shell the other tests run offers no push (harness.ts, HEADLESS_SHELL).
  const pushBrowser = await launchBrowser({ push: true });
  t.after(() => pushBrowser.close());
  const dora = await signUp(server, { name: 'Dora Desk' });
  const pia = await signUp(server, { name: 'Pia Patrol' });
  assert.equal((await call(server, 'POST', `/v1/orgs/${dora.slug}/members`, { email: pia.email, role: 'member' }, dora.cookie)).status, 201);
  const orgs = (await call<{ orgs: { id: number; name: string; slug: string }[] }>(server, 'GET', '/v1/orgs', undefined, dora.cookie)).body.orgs;
  const org = orgs.find((o) => o.slug === dora.slug)!;

  const context = await signedInContext(pushBrowser, server, pia, { viewport: PHONE, permissions: ['geolocation', 'notifications'], geolocation: HERE });
  await fakePushService(context, `https://push.example.com/send/pia-${process.pid}`);
  const { page, errors } = await openField(context);
  await page.selectOption('[data-testid="org-select"]', String(org.id));
  // The offer, at the top of the terminal, with what it is for.
  await page.waitForSelector('[data-testid="push-offer"]');
  assert.match((await page.textContent('[data-testid="push-offer"]')) ?? '', /Turn on notifications.*alert.*assigned to you.*by email/s);
  await screenshot(page, 'push-offer-field');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'push-offer-field');
  await page.setViewportSize(PHONE);

  // Before: nobody has notifications on, so both members would get an email.
  await page.click('[data-testid="alert-open"]');
  await page.waitForSelector('[data-testid="alert-reach"][data-state="known"]');
  const reach = page.locator('[data-testid="alert-reach"]');
  assert.deepEqual([await reach.getAttribute('data-members'), await reach.getAttribute('data-push'), await reach.getAttribute('data-email')], ['2', '0', '2']);
  assert.match((await reach.textContent()) ?? '', /All 2 people in Dora Desk, you included, will be told: 2 by email\./);
  await screenshot(page, 'alert-reach');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'alert-reach');
  await page.setViewportSize(PHONE);
  await page.getByRole('button', { name: 'Cancel' }).click();

  // Turning them on here registers this phone (the service worker, the subscription posted to the server).
  await page.click('[data-testid="push-offer-enable"]');
  await page.waitForSelector('[data-testid="push-offer-done"]');
  const after = await call<{ by_push: number; by_email: number; you: string }>(server, 'GET', `/v1/signals/alert-reach?org_id=${org.id}`, undefined, pia.cookie);
  assert.deepEqual([after.body.by_push, after.body.by_email, after.body.you], [1, 1, 'push']);
  await page.click('[data-testid="alert-open"]');
  await page.waitForSelector('[data-testid="alert-reach"][data-push="1"]');
  assert.match((await reach.textContent()) ?? '', /will be told: 1 by notification, 1 by email\./);
  await page.fill('[data-testid="alert-note"]', 'Oil on the slipway');
  await page.click('[data-testid="alert-submit"]');
  assert.match((await page.textContent('[data-testid="alert-confirm-text"]')) ?? '', /2 people in Dora Desk will be notified now/);
  await page.click('[data-testid="alert-confirm"]');
  await page.waitForSelector('[data-testid="flash"]:text("Alert sent.")');

  // Each member by the channel the screen named: Pia by push, Dora (no notifications) by email.
  const channel = async (u: ApiUser) => {
    const res = await call<{ deliveries: { kind: string; topic: string }[] }>(server, 'GET', '/v1/deliveries?limit=50', undefined, u.cookie);
    return res.body.deliveries.filter((d) => d.topic === 'signal.alert').map((d) => d.kind);
  };
  assert.deepEqual(await channel(pia), ['push']);
  assert.deepEqual(await channel(dora), ['email']);
  // On reload the offer is gone: this browser has notifications on.
  await page.reload();
  await page.waitForSelector('[data-testid="beacon-toggle"]');
  assert.equal(await page.locator('[data-testid="push-offer"]').count(), 0);
  assert.deepEqual(errors, []);

  // The dashboard offers it on the first visit too; "Not now" puts it away on this browser.
  const desk = await signedInContext(pushBrowser, server, dora, { viewport: DESKTOP, permissions: ['notifications'] });
  await fakePushService(desk, `https://push.example.com/send/dora-${process.pid}`);
  const dash = await desk.newPage();
  const dashErrors = watchErrors(dash);
  await dash.goto(`${server.url}/app/incidents`);
  await dash.waitForSelector('[data-testid="push-offer"]');
  await screenshot(dash, 'push-offer-dashboard');
  await dash.setViewportSize(PHONE);
  await screenshot(dash, 'push-offer-dashboard');
  await dash.click('[data-testid="push-offer-later"]');
  await dash.waitForSelector('[data-testid="push-offer"]', { state: 'detached' });
  await dash.reload();
  await dash.waitForSelector('[data-testid="new-incident"]');
  assert.equal(await dash.locator('[data-testid="push-offer"]').count(), 0);
  assert.deepEqual(dashErrors, []);
  await desk.close();
  await context.close();
});

test('arrival (issue #38): the beacon reaching an assigned incident shows "Arrived automatically" on its card at once, and Undo records the correction', async () => {
  const user = await signUp(server, { name: 'Arno Arrival' });
  const org = (await call<{ orgs: { id: number; primary: boolean }[] }>(server, 'GET', '/v1/orgs', undefined, user.cookie)).body.orgs.find((o) => o.primary)!;
  // 40 m north of where the phone stands, radius 150 m; assigned to Arno.
  const created = await call<{ Id: number }>(server, 'POST', '/v1/tickets', { title: 'Water on the road', lat: HERE.latitude + 0.00036, lng: HERE.longitude, arrival_radius_m: 150, org_id: org.id }, user.cookie);
  assert.equal(created.status, 201);
  const id = created.body.Id;
  assert.equal((await call(server, 'PATCH', `/v1/tickets/${id}`, { assignee_id: user.id }, user.cookie)).status, 200);
  const context = await fieldContext(user);
  const { page, errors } = await openField(context);
  const card = page.locator(`[data-testid="my-incident"][data-id="${id}"]`);
  await card.waitFor();
  assert.equal(await card.getByTestId('my-auto-arrived').count(), 0);

  // The field page's own beacon is the position: the card says so without a reload.
  await page.click('[data-testid="beacon-toggle"]');
  await card.getByTestId('my-auto-arrived').getByText('Arrived automatically').waitFor();
  assert.equal(await card.getByTestId('my-on-scene').textContent(), 'On scene ✓');
  await screenshot(page, 'field-arrived');
  const timeline = async () => (await call<{ events: { id: number; type: string; data: Record<string, unknown> }[] }>(server, 'GET', `/v1/tickets/${id}/timeline`, undefined, user.cookie)).body.events;
  const arrival = (await timeline()).find((e) => e.type === 'on_scene')!;
  assert.equal(arrival.data.source, 'position');

  await card.getByTestId('my-auto-arrived-undo').click();
  await card.getByTestId('my-auto-arrived').waitFor({ state: 'detached' });
  const undone = (await timeline()).filter((e) => e.type === 'on_scene_undone');
  assert.deepEqual(undone.map((e) => e.data), [{ event_id: arrival.id }]);
  // An undone arrival was no arrival: "On scene" can be tapped again.
  assert.equal(await card.getByTestId('my-on-scene').isEnabled(), true);
  await screenshot(page, 'field-arrival-undone');

  // The dashboard's incident page: the radius on a small map, who is inside, the radius edited.
  const dashboard = await context.newPage();
  await dashboard.setViewportSize(DESKTOP);
  await dashboard.goto(`${server.url}/app/incidents/${id}`);
  const place = dashboard.getByTestId('incident-place');
  await place.getByTestId('incident-inside').getByText('Arno Arrival').waitFor();
  assert.match((await place.getByTestId('incident-inside').textContent()) ?? '', /Arno Arrival inside since .*\(arrival undone by them\)/);
  await dashboard.waitForSelector('[data-testid="incident-map"] path.arrival-radius');
  await place.getByTestId('arrival-radius').fill('5');
  await place.getByTestId('arrival-radius-save').click();
  await place.locator('#err-arrival_radius_m').getByText('Enter 10 or more.').waitFor();
  await place.getByTestId('arrival-radius').fill('250');
  await place.getByTestId('arrival-radius-save').click();
  await place.getByTestId('arrival-radius-saved').getByText('Saved: arrival radius 250 m.').waitFor();
  assert.equal((await call<{ arrival_radius_m: number }>(server, 'GET', `/v1/tickets/${id}`, undefined, user.cookie)).body.arrival_radius_m, 250);
  await screenshot(dashboard, 'incident-arrival');
  await dashboard.close();
  await page.click('[data-testid="beacon-toggle"]');
  await page.waitForSelector('[data-testid="beacon-status"][data-state="off"]');
  assert.deepEqual(errors, []);
  await context.close();
});
