/* global self, caches, fetch, URL */
// Muster's service worker, served at /sw.js with scope '/'. It keeps the field terminal's shell
// (the /field page, the hashed assets it references, its manifest and icons) so the terminal opens
// offline, and shows Web Push notifications. It never caches /v1/ API answers or uploads, and it
// leaves every other page to the network.
const CACHE = 'muster-field-v1';
const SHELL = '/field';
const STATIC = ['/field.webmanifest', '/icon.svg', '/icon-192.png', '/icon-512.png'];

/** The /assets/ files a page's HTML references. */
function assetsOf(html) {
  const found = new Set();
  for (const m of html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)) found.add(m[1]);
  return [...found];
}

/** Stores a fresh /field page and its assets, then drops assets of older builds. */
async function storeShell(response) {
  const cache = await caches.open(CACHE);
  const html = await response.clone().text();
  const assets = assetsOf(html);
  await Promise.all(
    assets.map(async (url) => {
      if (await cache.match(url)) return; // hashed: never changes
      const res = await fetch(url);
      if (res.ok) await cache.put(url, res);
    }),
  );
  await cache.put(SHELL, response);
  const keep = new Set(assets);
  for (const req of await cache.keys()) {
    const path = new URL(req.url).pathname;
    if (path.startsWith('/assets/') && !keep.has(path)) await cache.delete(req);
  }
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await cache.addAll(STATIC).catch(() => undefined);
      const res = await fetch(SHELL, { cache: 'no-cache' });
      if (res.ok) await storeShell(res);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith('muster-') && name !== CACHE) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  const path = url.pathname;
  if (path.startsWith('/v1/') || path.startsWith('/uploads/')) return; // always the network, never cached

  if (req.mode === 'navigate' && (path === SHELL || path.startsWith(SHELL + '/'))) {
    // Network first (a deploy shows at once), the cached shell when offline.
    event.respondWith(
      (async () => {
        try {
          const res = await fetch(req);
          if (res.ok) event.waitUntil(storeShell(res.clone()).catch(() => undefined));
          return res;
        } catch (err) {
          const cached = await caches.match(SHELL);
          if (cached) return cached;
          throw err;
        }
      })(),
    );
    return;
  }
  if (path.startsWith('/assets/')) {
    // Hashed and immutable: the cached copy when there is one (only the field shell's are kept).
    event.respondWith(caches.match(req).then((hit) => hit || fetch(req)));
    return;
  }
  if (STATIC.includes(path)) {
    event.respondWith(fetch(req).catch(async (err) => (await caches.match(path)) || Promise.reject(err)));
  }
});

self.addEventListener('push', (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { body: event.data ? event.data.text() : '' };
  }
  const url =
    data.url ||
    (data.incident_id ? `/app/incidents/${data.incident_id}` : data.signal_id ? '/app/signals' : '/app/');
  event.waitUntil(
    self.registration.showNotification(data.title || 'Muster', {
      body: data.body || '',
      icon: '/icon-192.png',
      badge: '/icon-192.png',
      tag: data.signal_id ? `signal-${data.signal_id}` : data.incident_id ? `incident-${data.incident_id}` : undefined,
      // A page (paging): Acknowledge and Resolve buttons, answered below with the notification's token.
      actions: Array.isArray(data.actions) ? data.actions.slice(0, 2).map((a) => ({ action: String(a.action), title: String(a.title) })) : [],
      requireInteraction: Array.isArray(data.actions),
      data: { url, actionUrl: typeof data.action_url === 'string' ? data.action_url : undefined },
    }),
  );
});

/**
 * A page's Acknowledge or Resolve button: posts the action with the notification's token (no
 * session needed, none sent) and says what happened in a notification of its own.
 */
async function pageAction(notification, action) {
  let title = 'Muster';
  let body = '';
  try {
    const res = await fetch(notification.data.actionUrl, {
      method: 'POST',
      credentials: 'omit',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action }),
    });
    const out = res.ok ? await res.json() : undefined;
    const words = { acknowledged: 'Acknowledged: it is yours', already_acknowledged: 'Already acknowledged', resolved: 'Resolved', already_resolved: 'Already resolved' };
    title = out ? `Incident ${out.incident.id}: ${words[out.outcome] || out.outcome}` : 'Not possible';
    body = out ? out.incident.title : 'This page is more than a day old or no longer valid: open Muster.';
  } catch {
    title = 'Not sent';
    body = 'No connection: open Muster to acknowledge.';
  }
  await self.registration.showNotification(title, { body, icon: '/icon-192.png', badge: '/icon-192.png', tag: notification.tag, data: { url: notification.data.url } });
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  if ((event.action === 'acknowledge' || event.action === 'resolve') && event.notification.data && event.notification.data.actionUrl) {
    event.waitUntil(pageAction(event.notification, event.action));
    return;
  }
  const target = new URL((event.notification.data && event.notification.data.url) || '/app/', self.location.origin);
  event.waitUntil(
    (async () => {
      const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const same = open.find((c) => new URL(c.url).pathname === target.pathname) || open.find((c) => new URL(c.url).pathname.startsWith('/app'));
      if (same) {
        await same.focus();
        if (new URL(same.url).href !== target.href && 'navigate' in same) await same.navigate(target.href).catch(() => undefined);
        return;
      }
      await self.clients.openWindow(target.href);
    })(),
  );
});
