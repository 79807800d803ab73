// Local stand-ins for the services deliveries talk to (an SMTP server, webhook receivers, a push
// service, Twilio), every one a real server on 127.0.0.1 with a port from 0, plus the parsers the
// delivery tests check their traffic with and a few API helpers to make real outbox rows.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createECDH, createDecipheriv, hkdfSync, randomBytes, verify as verifySignature, type ECDH } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import ICAL from 'ical.js';
import { SMTPServer } from 'smtp-server';
import type { ManualClock } from '../src/lib/clock.js';
import type { Headers } from './helpers.js';

// ---------------------------------------------------------------------------------------------
// HTTP(S) receivers: webhooks, the push service, Twilio, a phone hook
// ---------------------------------------------------------------------------------------------

export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
  /** Real time (Date.now()) when the body was complete. */
  at: number;
}

/** How to answer: a status (with headers and body), `'hang'` (never answer), or a function writing the answer itself. */
export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang' | ((res: http.ServerResponse) => void);

export interface Receiver {
  port: number;
  /** `http(s)://127.0.0.1:<port>` (no trailing slash). */
  origin: string;
  requests: ReceivedRequest[];
  /** Decides each answer; replace it to change the receiver's behaviour. Default: 200 `ok`. */
  respond: (r: ReceivedRequest) => Reply;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  host?: string;
  port?: number;
  tls?: { key: string; cert: string };
}

/** An HTTP (or HTTPS with `tls`) server recording every request, with a settable answer. */
export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  const host = opts.host ?? '127.0.0.1';
  const receiver: Receiver = {
    port: 0,
    origin: '',
    requests: [],
    respond: () => ({ status: 200, body: 'ok' }),
    close: () => Promise.resolve(),
  };
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const r: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, text: body.toString('utf8'), at: Date.now() };
      receiver.requests.push(r);
      const reply = receiver.respond(r);
      if (reply === 'hang') return;
      if (typeof reply === 'function') return reply(res);
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? '');
    });
  };
  const server = opts.tls ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, handler) : http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  receiver.port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  receiver.origin = `${opts.tls ? 'https' : 'http'}://${shownHost}:${receiver.port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Whether this machine can listen on the IPv6 loopback. */
export async function hasIpv6Loopback(): Promise<boolean> {
  const server = http.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => server.close(() => resolve(true)));
  });
}

// ---------------------------------------------------------------------------------------------
// SMTP
// ---------------------------------------------------------------------------------------------

export interface SmtpPeer {
  port: number;
  /** `smtp://127.0.0.1:<port>` */
  url: string;
  messages: Mail[];
  /** Answers RCPT TO with an SMTP error (code and text) when it returns one. */
  rejectRcpt: (address: string) => { code: number; message: string } | undefined;
  close(): Promise<void>;
}

/** An smtp-server instance on 127.0.0.1 (optionally on a given port, to come back where it was). */
export async function startSmtp(port = 0): Promise<SmtpPeer> {
  const peer: SmtpPeer = { port: 0, url: '', messages: [], rejectRcpt: () => undefined, close: () => Promise.resolve() };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = peer.rejectRcpt(address.address);
      if (!refusal) return callback();
      callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        peer.messages.push(parseMail(Buffer.concat(chunks).toString('latin1'), { from: from ? from.address : '', to: session.envelope.rcptTo.map((r) => r.address) }));
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  peer.port = (server.server.address() as AddressInfo).port;
  peer.url = `smtp://127.0.0.1:${peer.port}`;
  peer.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return peer;
}

// ---------------------------------------------------------------------------------------------
// MIME (mailparser is not installed: a minimal parser of what nodemailer writes)
// ---------------------------------------------------------------------------------------------

export interface MimePart {
  /** Lower-cased header names; values unfolded, as written. */
  headers: Record<string, string[]>;
  /** Lower-cased media type, e.g. `text/plain`. */
  type: string;
  /** Content-Type parameters, names lower-cased. */
  params: Record<string, string>;
  /** The decoded body of a leaf part. */
  body: Buffer;
  parts: MimePart[];
}

export interface Mail {
  envelope: { from: string; to: string[] };
  raw: string;
  root: MimePart;
  header(name: string): string | undefined;
  subject: string;
  text: string;
  html: string;
  /** Every leaf part. */
  leaves: MimePart[];
  /** The iCalendar parts (text/calendar alternatives and .ics attachments), decoded. */
  calendars: { part: MimePart; text: string }[];
}

function parseParams(value: string): { main: string; params: Record<string, string> } {
  const pieces: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of value) {
    if (ch === '"') quoted = !quoted;
    if (ch === ';' && !quoted) {
      pieces.push(current);
      current = '';
    } else current += ch;
  }
  pieces.push(current);
  const params: Record<string, string> = {};
  for (const p of pieces.slice(1)) {
    const i = p.indexOf('=');
    if (i < 0) continue;
    params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim().replace(/^"|"$/g, '');
  }
  return { main: (pieces[0] ?? '').trim(), params };
}

function decodeTransfer(body: string, encoding: string): Buffer {
  switch (encoding.toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64');
    case 'quoted-printable':
      return Buffer.from(
        body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        'latin1',
      );
    default:
      return Buffer.from(body, 'latin1');
  }
}

/** RFC 2047 encoded words (=?utf-8?Q?...?= and =?utf-8?B?...?=), adjacent ones joined. */
export function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_m, _charset: string, enc: string, data: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : Buffer.from(data.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_x, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8'),
    );
}

export function parseMime(raw: string): MimePart {
  const split = /\r?\n\r?\n/.exec(raw);
  const head = split ? raw.slice(0, split.index) : raw;
  const rest = split ? raw.slice(split.index + split[0].length) : '';
  const headers: Record<string, string[]> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(i + 1).trim());
  }
  const ct = parseParams(headers['content-type']?.[0] ?? 'text/plain');
  const part: MimePart = { headers, type: ct.main.toLowerCase(), params: ct.params, body: Buffer.alloc(0), parts: [] };
  if (part.type.startsWith('multipart/')) {
    const boundary = ct.params.boundary;
    assert.ok(boundary, 'a multipart part has a boundary');
    const segments = rest.split(new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?[ \\t]*(?:\\r?\\n|$)`));
    // The first segment is the preamble, the last the epilogue.
    for (const s of segments.slice(1, -1)) part.parts.push(parseMime(s));
  } else {
    part.body = decodeTransfer(rest, headers['content-transfer-encoding']?.[0] ?? '7bit');
  }
  return part;
}

function leavesOf(p: MimePart): MimePart[] {
  return p.parts.length === 0 ? [p] : p.parts.flatMap(leavesOf);
}

export function parseMail(raw: string, envelope: { from: string; to: string[] }): Mail {
  const root = parseMime(raw);
  const leaves = leavesOf(root);
  const textOf = (type: string) =>
    leaves
      .filter((l) => l.type === type && !/attachment/i.test(l.headers['content-disposition']?.[0] ?? ''))
      .map((l) => l.body.toString('utf8'))
      .join('\n');
  return {
    envelope,
    raw,
    root,
    leaves,
    header: (name) => {
      const v = root.headers[name.toLowerCase()]?.[0];
      return v === undefined ? undefined : decodeWords(v);
    },
    subject: decodeWords(root.headers.subject?.[0] ?? ''),
    text: textOf('text/plain'),
    html: textOf('text/html'),
    calendars: leaves
      .filter((l) => l.type === 'text/calendar' || l.type === 'application/ics' || /\.ics$/i.test(l.params.name ?? ''))
      .map((part) => ({ part, text: part.body.toString('utf8') })),
  };
}

// ---------------------------------------------------------------------------------------------
// iCalendar, with the real parser
// ---------------------------------------------------------------------------------------------

export interface ParsedEvent {
  uid: string;
  start: string;
  end: string;
  status: string | null;
  summary: string | null;
  sequence: number | null;
  organizer: string | null;
  attendees: string[];
}

export interface ParsedCalendar {
  method: string | null;
  events: ParsedEvent[];
}

function timeOf(v: unknown): string {
  assert.ok(v instanceof ICAL.Time, 'a date-time value');
  return v.toJSDate().toISOString();
}

/** Parses an iCalendar text with ical.js (ICAL.parse + ICAL.Component). */
export function parseIcs(text: string): ParsedCalendar {
  const cal = new ICAL.Component(ICAL.parse(text) as unknown[]);
  assert.equal(cal.name, 'vcalendar');
  const str = (c: InstanceType<typeof ICAL.Component>, name: string) => {
    const v = c.getFirstPropertyValue(name);
    return v === null ? null : String(v);
  };
  return {
    method: str(cal, 'method'),
    events: cal.getAllSubcomponents('vevent').map((e) => ({
      uid: String(e.getFirstPropertyValue('uid')),
      start: timeOf(e.getFirstPropertyValue('dtstart')),
      end: timeOf(e.getFirstPropertyValue('dtend')),
      status: str(e, 'status'),
      summary: str(e, 'summary'),
      sequence: e.getFirstPropertyValue('sequence') === null ? null : Number(e.getFirstPropertyValue('sequence')),
      organizer: str(e, 'organizer'),
      attendees: e.getAllProperties('attendee').map((p) => String(p.getFirstValue())),
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// Web Push: a TLS certificate for the stand-in push service, subscription keys, decryption
// ---------------------------------------------------------------------------------------------

/** A self-signed certificate for 127.0.0.1, made with the openssl CLI in a temp dir. */
export function selfSignedCert(): { key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-tls-'));
  try {
    const [keyFile, certFile] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
      { stdio: 'ignore' },
    );
    return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface BrowserKeys {
  ecdh: ECDH;
  auth: Buffer;
  /** As a browser's PushSubscription.toJSON() gives them. */
  json: { p256dh: string; auth: string };
}

/** The keys a browser makes for a push subscription: a P-256 key pair and a 16-byte auth secret. */
export function browserKeys(): BrowserKeys {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return { ecdh, auth, json: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } };
}

/** Decrypts an aes128gcm Web Push body (RFC 8188 + RFC 8291) with the subscription's keys. */
export function decryptPush(body: Buffer, keys: BrowserKeys): string {
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idLen = body[20]!;
  const senderPublic = body.subarray(21, 21 + idLen);
  const records = body.subarray(21 + idLen);
  assert.equal(idLen, 65, 'the key id is the sender public key');
  assert.ok(records.length <= rs, 'one record');
  const shared = keys.ecdh.computeSecret(senderPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), keys.ecdh.getPublicKey(), senderPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', shared, keys.auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(records.subarray(records.length - 16));
  const padded = Buffer.concat([decipher.update(records.subarray(0, records.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  assert.equal(padded[end], 2, 'the last record ends with the 0x02 delimiter');
  return padded.subarray(0, end).toString('utf8');
}

/** Checks `Authorization: vapid t=<JWT>, k=<key>`: the key, the ES256 signature; answers the claims. */
export function verifyVapid(authorization: string | undefined, publicKey: string): { aud: string; sub: string; exp: number } {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? '');
  assert.ok(m, `a VAPID authorization header (got ${authorization})`);
  const [, jwt, k] = m;
  assert.equal(k, publicKey, 'k= is the instance public key');
  const [header, claims, signature] = jwt!.split('.') as [string, string, string];
  assert.deepEqual(JSON.parse(Buffer.from(header, 'base64url').toString('utf8')), { typ: 'JWT', alg: 'ES256' });
  const point = Buffer.from(publicKey, 'base64url');
  const jwk = { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') };
  assert.ok(
    verifySignature('sha256', Buffer.from(`${header}.${claims}`), { key: jwk, format: 'jwk', dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url')),
    'the VAPID JWT is signed with the instance key',
  );
  return JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as { aud: string; sub: string; exp: number };
}

// ---------------------------------------------------------------------------------------------
// API helpers that write real outbox rows
// ---------------------------------------------------------------------------------------------

export interface EventType {
  id: number;
  slug: string;
  livemode: boolean;
  webhook_url: string | null;
  webhook_secret: string | null;
}

export interface Booking {
  id: string;
  status: string;
  event_type_id: number | null;
  host_id: number;
  attendee_name: string;
  attendee_email: string;
  start_time: string;
  end_time: string;
  cancel_url: string;
  reschedule_url: string;
  livemode: boolean;
  created_at: string;
}

export interface Delivery {
  id: number;
  kind: string;
  topic: string;
  recipient: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  attempt_log: { attempt: number; outcome: string; status_code: number | null; error: string | null; duration_ms: number; at: string }[];
}

/** Every day, all day, in UTC: slots exist whatever day the clock shows. */
export const ALL_WEEK = { timezone: 'UTC', weekly: (['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const).map((day) => ({ day, start: '00:00', end: '24:00' })) };

export async function createEventType(app: FastifyInstance, headers: Headers, payload: Record<string, unknown>): Promise<EventType> {
  const res = await app.inject({ method: 'POST', url: '/v1/event-types', headers, payload: { duration_minutes: 30, availability: ALL_WEEK, ...payload } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<EventType>();
}

const day = (clock: ManualClock, plusDays: number) => new Date(clock.now().getTime() + plusDays * 86_400_000).toISOString().slice(0, 10);

/** The first free slot from tomorrow on (the clock's tomorrow), from the public slots route. */
export async function freeSlot(app: FastifyInstance, clock: ManualClock, userSlug: string, eventSlug: string): Promise<string> {
  for (let d = 1; d < 30; d += 1) {
    const res = await app.inject({ method: 'GET', url: `/v1/slots/${userSlug}/${eventSlug}?date=${day(clock, d)}` });
    assert.equal(res.statusCode, 200, res.body);
    const first = res.json<{ slots: { start_time: string }[] }>().slots[0];
    if (first) return first.start_time;
  }
  throw new Error('no free slot in 30 days');
}

let guests = 0;
export function guest(prefix = 'guest') {
  guests += 1;
  return { attendee_name: `Guest ${guests}`, attendee_email: `${prefix}-${process.pid}-${guests}@example.com` };
}

/** Books the next free slot through the public route (live mode), as an anonymous visitor would. */
export async function bookPublic(app: FastifyInstance, clock: ManualClock, userSlug: string, eventSlug: string, attendee = guest()): Promise<Booking> {
  const start_time = await freeSlot(app, clock, userSlug, eventSlug);
  const res = await app.inject({ method: 'POST', url: `/v1/book/${userSlug}/${eventSlug}`, payload: { ...attendee, start_time } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<Booking>();
}

/** Books the next free slot through POST /v1/bookings, in the credential's mode. */
export async function bookAs(app: FastifyInstance, clock: ManualClock, headers: Headers, eventTypeId: number, attendee = guest()): Promise<Booking> {
  for (let d = 1; d < 30; d += 1) {
    const res = await app.inject({ method: 'GET', url: `/v1/availability?event_type_id=${eventTypeId}&date=${day(clock, d)}`, headers });
    assert.equal(res.statusCode, 200, res.body);
    const first = res.json<{ slots: { start_time: string }[] }>().slots[0];
    if (!first) continue;
    const booked = await app.inject({ method: 'POST', url: '/v1/bookings', headers, payload: { event_type_id: eventTypeId, ...attendee, start_time: first.start_time } });
    assert.equal(booked.statusCode, 201, booked.body);
    return booked.json<Booking>();
  }
  throw new Error('no free slot in 30 days');
}

/** GET /v1/deliveries (one page of up to 200). */
export async function listDeliveries(app: FastifyInstance, headers: Headers, query = 'limit=200'): Promise<Delivery[]> {
  const res = await app.inject({ method: 'GET', url: `/v1/deliveries?${query}`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ deliveries: Delivery[] }>().deliveries;
}

/** The path of a link under PUBLIC_URL (http://muster.test in tests). */
export function pathOf(url: string): string {
  const u = new URL(url);
  assert.equal(u.origin, 'http://muster.test', url);
  return `${u.pathname}${u.search}`;
}

/** Waits (real time) until `check` holds, polling. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
