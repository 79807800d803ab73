import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { notFoundPage } from '../pages-assets/index.js';

/** Where `npm run build` puts the front end: dist/web beside dist/server.js (also found from src/ under tsx). */
export const defaultWebDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/web');

/** Page addresses and the built HTML file each one serves. The pages route on the client. */
export const PAGES: readonly { file: string; paths: readonly string[] }[] = [
  // `/invites/:token`: the link of an org invite email (the dashboard's page shows the invite).
  // `/register?email=`: the link of invite emails sent before invite links existed; the dashboard's
  // registration, prefilled. `/verify-email?email=&code=`: the link of the address-confirmation email.
  { file: 'app.html', paths: ['/app', '/app/*', '/invites/:token', '/register', '/verify-email'] },
  { file: 'field.html', paths: ['/field', '/field/*'] },
  {
    file: 'book.html',
    paths: ['/assign/:username/:event_slug', '/assign/:org_slug/:team_slug/:event_slug', '/book/:username/:event_slug', '/book/:org_slug/:team_slug/:event_slug'],
  },
  { file: 'manage.html', paths: ['/bookings/manage/:token'] },
];

const NOT_BUILT =
  '<!doctype html><meta charset="utf-8"><title>Muster</title><h1>The web pages are not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>, which builds first) and reload.</p>';

/**
 * Serves the built front end: the HTML pages (no-cache, so a deploy is picked up at once), hashed
 * assets under /assets/ (immutable) and the few stable files at the root (/embed.js, the service
 * worker, the manifest and icons; revalidated). Without a build the pages answer 503 with the fix.
 */
export interface WebOptions {
  webDir?: string;
  /** Whether a page's address names something; when not, a styled 404 instead of the page shell. */
  pageExists?: (file: string, params: Record<string, string>) => Promise<boolean>;
}

const MISSING: Record<string, [string, string]> = {
  'book.html': ['Booking', 'There is no booking page at this address. Check the link, or ask its owner for a new one.'],
  'manage.html': ['Your booking', 'This booking link is not valid. Use the link from your latest email about the booking.'],
};

export const webRoutes: FastifyPluginAsync<WebOptions> = async (app, opts) => {
  // Every page and file here is public: pages call the API with the visitor's own session cookie.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
  });
  const webDir = opts.webDir ?? defaultWebDir;
  const built = fs.existsSync(path.join(webDir, 'app.html'));
  if (!built) app.log.warn({ webDir }, 'web front end not built; pages answer 503 until `npm run build`');

  const html = new Map<string, string>();
  const page = (file: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const missing = MISSING[file];
    if (missing && opts.pageExists && !(await opts.pageExists(file, request.params as Record<string, string>))) {
      return reply.status(404).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(notFoundPage(...missing));
    }
    let body = html.get(file);
    if (body === undefined && built) {
      body = fs.readFileSync(path.join(webDir, file), 'utf8');
      html.set(file, body);
    }
    reply.header('cache-control', 'no-cache');
    if (body === undefined) return reply.status(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    return reply.type('text/html; charset=utf-8').send(body);
  };

  for (const { file, paths } of PAGES) {
    for (const url of paths) app.get(url, { schema: { hide: true } }, page(file));
  }
  // `/` itself (a redirect to /app/, or an OsmAnd fix: Traccar Client's default URL) is in modules/trackers.
  // The sign-in link in a magic-code email: the dashboard's sign-in page, prefilled. Signing in
  // takes a click (a POST), so a mail scanner that opens the link spends nothing.
  app.get('/login/magic', { schema: { hide: true } }, (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    return reply.header('referrer-policy', 'no-referrer').redirect(`/app/login${query}`);
  });

  if (!built) return;
  await app.register(fastifyStatic, {
    root: webDir,
    prefix: '/',
    wildcard: false,
    index: false,
    // Pages go through the routes above; Vite's manifest is for the build only.
    allowedPath: (pathName) => !pathName.endsWith('.html') && !pathName.startsWith('/.vite'),
    setHeaders: (res, filePath) => {
      const rel = path.relative(webDir, filePath);
      res.header('cache-control', rel.startsWith(`assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
};
