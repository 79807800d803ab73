import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';

/** The public booking pages (and the embed script) may be framed by any site, or by EMBED_ALLOWED_ORIGINS. */
export const EMBEDDABLE_PREFIXES = ['/book/', '/assign/', '/embed'] as const;
/** Pages whose address holds a secret token: never sent on in a Referer. */
export const TOKEN_PAGE_PREFIXES = ['/bookings/manage/', '/incidents/status/', '/v1/bookings/manage/', '/calendar/'] as const;

export interface HeaderOptions {
  /** frame-ancestors of the embeddable pages; ['*'] = any site. */
  embedAllowedOrigins: readonly string[];
  /** PUBLIC_URL is https: send Strict-Transport-Security. */
  https: boolean;
}

/** No inline script or style anywhere: scripts and stylesheets are files served by Muster. */
function pagePolicy(frameAncestors: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob: https:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "worker-src 'self'",
    `frame-ancestors ${frameAncestors}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; ');
}

/** The sites that may frame a booking page: the allowed ones, and always Muster itself (the dashboard's Share preview). */
function frameAncestors(allowed: readonly string[]): string {
  return allowed.includes('*') ? '*' : ["'self'", ...allowed].join(' ');
}

/**
 * The security headers of one response, decided by its path and whether it is an HTML page.
 * One rule for every route, so pages added later (the web front end, static files) get them too.
 */
export function securityHeaders(path: string, html: boolean, opts: HeaderOptions): Record<string, string> {
  const embeddable = EMBEDDABLE_PREFIXES.some((p) => path.startsWith(p));
  const headers: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    'referrer-policy': TOKEN_PAGE_PREFIXES.some((p) => path.startsWith(p)) ? 'no-referrer' : 'strict-origin-when-cross-origin',
  };
  if (opts.https) headers['strict-transport-security'] = 'max-age=31536000';
  if (html) {
    headers['content-security-policy'] = pagePolicy(embeddable ? frameAncestors(opts.embedAllowedOrigins) : "'none'");
  } else if (path === '/sw.js') {
    // A service worker runs under its own script's policy: it must fetch this origin (the field
    // terminal's offline shell), and nothing else.
    headers['content-security-policy'] = "default-src 'self'; frame-ancestors 'none'";
  } else {
    // Anything else (JSON, images, uploads) opened on its own runs nothing and is never framed.
    headers['content-security-policy'] = "default-src 'none'; frame-ancestors 'none'";
  }
  if (!embeddable) {
    headers['x-frame-options'] = 'DENY';
    headers['cross-origin-opener-policy'] = 'same-origin';
  }
  return headers;
}

/**
 * Sets securityHeaders() on every response (onSend, so static files are covered), keeping a
 * header a route set itself (e.g. a stricter Referrer-Policy), and X-Request-Id. Authenticated JSON
 * is never cached. One hook for every header of the answer: each hook is a step of every request.
 */
export default fp(
  (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
    const opts: HeaderOptions = { embedAllowedOrigins: ctx.config.embedAllowedOrigins, https: ctx.config.publicUrl.startsWith('https:') };
    // The headers depend only on a few facts of the path (embeddable, token page, /sw.js) and on
    // whether the answer is HTML: each combination is computed once, as [name, value] pairs.
    const memo = new Map<string, readonly (readonly [string, string])[]>();
    const headersOf = (path: string, html: boolean) => {
      const k = `${EMBEDDABLE_PREFIXES.some((p) => path.startsWith(p)) ? 'e' : '-'}${TOKEN_PAGE_PREFIXES.some((p) => path.startsWith(p)) ? 't' : '-'}${path === '/sw.js' ? 's' : '-'}${html ? 'h' : '-'}`;
      let pairs = memo.get(k);
      if (!pairs) memo.set(k, (pairs = Object.entries(securityHeaders(path, html, opts))));
      return pairs;
    };
    // Answers written straight to the socket (live streams, events/sse.ts) skip onSend: they send
    // nosniff and the request id in their own head. Nothing is set on the raw response here: a header
    // set there makes Node validate and copy every header the reply adds (writeHead's slow path).
    app.addHook('onSend', (request, reply, payload, done) => {
      const type = reply.getHeader('content-type');
      const url = request.url;
      const q = url.indexOf('?');
      const html = typeof type === 'string' && type.startsWith('text/html');
      for (const [name, value] of headersOf(q === -1 ? url : url.slice(0, q), html)) {
        if (!reply.hasHeader(name)) reply.header(name, value);
      }
      if (request.actor && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      reply.header('x-request-id', request.id);
      done(null, payload);
    });
  },
  { name: 'security-headers' },
);
