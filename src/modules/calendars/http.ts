import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { outgoingTarget } from '../deliveries/index.js';
import { guardedLookup } from '../deliveries/index.js';

export interface FetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The whole exchange, redirects included, ends by then. */
  timeoutMs: number;
  /** A longer answer is refused (a feed is text; a huge one is a mistake or an attack). */
  maxBytes: number;
  allowPrivate: boolean;
  /** Followed for GET/PROPFIND/REPORT only; writes never follow one. */
  maxRedirects?: number;
  /** Basic credentials, sent only to the origin they were given for. */
  auth?: { username: string; password: string } | undefined;
}

export interface FetchResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Where the answer came from, after redirects. */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * One HTTP exchange with a calendar server the way Muster talks to outside hosts: the SSRF guard
 * of webhooks (literals checked before, names checked at connect time on every hop), a deadline
 * for the whole exchange, a bounded answer and a bounded number of redirects.
 */
export async function guardedFetch(url: string, opts: FetchOptions): Promise<FetchResult> {
  const deadline = Date.now() + opts.timeoutMs;
  const origin = new URL(url).origin;
  let target = url;
  let method = opts.method ?? 'GET';
  let body = opts.body;
  const follow = method === 'GET' || method === 'PROPFIND' || method === 'REPORT';
  for (let hop = 0; ; hop++) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out after ${opts.timeoutMs} ms`);
    const withAuth = opts.auth && new URL(target).origin === origin ? opts.auth : undefined;
    const res = await once(target, method, body, opts, left, withAuth);
    if (!follow || !REDIRECTS.has(res.status) || !res.headers.location) return res;
    if (hop >= (opts.maxRedirects ?? 3)) throw new Error(`too many redirects (more than ${opts.maxRedirects ?? 3})`);
    target = new URL(res.headers.location, target).toString();
    if (res.status === 303) [method, body] = ['GET', undefined];
  }
}

function once(url: string, method: string, body: string | undefined, opts: FetchOptions, timeoutMs: number, auth: FetchOptions['auth']): Promise<FetchResult> {
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = outgoingTarget(url, opts.allowPrivate);
    } catch (err) {
      return reject(err instanceof Error ? err : new Error(String(err)));
    }
    const headers: Record<string, string> = { 'user-agent': 'Muster-Calendars/1', ...opts.headers };
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body).toString();
    if (auth) headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(target, { method, headers, timeout: timeoutMs, ...(opts.allowPrivate ? {} : { lookup: guardedLookup }) }, (res) => {
      const declared = Number(res.headers['content-length'] ?? 0);
      if (declared > opts.maxBytes) return req.destroy(new Error(`answer too large (${declared} bytes, at most ${opts.maxBytes})`));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > opts.maxBytes) return req.destroy(new Error(`answer too large (more than ${opts.maxBytes} bytes)`));
        chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), url: target.toString() }));
      res.on('error', reject);
    });
    // `timeout` notices silence; the deadline also ends a server that trickles bytes forever.
    const timer = setTimeout(() => req.destroy(new Error(`timed out after ${opts.timeoutMs} ms`)), timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`timed out after ${opts.timeoutMs} ms`)));
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('close', () => clearTimeout(timer));
    req.end(body);
  });
}
