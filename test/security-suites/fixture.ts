// The records fixture shared by the access matrix and the fuzzer (its people through test/world.ts): org A with an owner, an admin and a
// member (cookies, live keys, the owner's test key), one live record of every kind in org A,
// records of org B (another tenant) and test-mode records in org A. Every text a record carries
// starts with a marker, so a response can be scanned for records it must never show.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { createKey, login, register, uniqueEmail, type TestUser } from '../factories.js';
import { castWorld, inject, sharedOrg, type Person, type PersonSpec } from '../world.js';
import type { Headers, Method, TestApp } from '../helpers.js';
import { signToken } from '../../src/lib/signing.js';
import { browserKeys } from '../peers.js';

/** Markers: org-scoped texts of A (team names, invites, member names), A's live records, B's records, A's test-mode records. */
export interface Markers {
  orgA: string;
  liveA: string;
  orgB: string;
  testA: string;
}

export interface Member extends TestUser {
  liveKey: string;
  liveKeyId: number;
}

export interface Fixture {
  t: TestApp;
  markers: Markers;
  root: TestUser;
  owner: Member & { testKey: string; testKeyId: number };
  admin: Member;
  member: Member;
  outsider: Member;
  orgA: { id: number; slug: string };
  orgB: { id: number; slug: string };
  teamA: string;
  /** The owner's personal live event type: all week, 15-minute slots, a webhook URL. */
  et: { id: number; slug: string };
  /** The owner's personal event type that needs confirmation. */
  pendingEt: { id: number; slug: string };
  /** Team A's round-robin event type (hosts: the owner and the member). */
  teamEt: { id: number; slug: string };
  incident: { Id: number; customer_token: string };
  reply: { id: number };
  signal: { Id: number };
  booking: { id: string };
  /** Pending bookings whose confirm token stays valid: one for confirm, one for decline. */
  toConfirm: string;
  toDecline: string;
  manageToken: string;
  pushEndpoint: string;
  inviteEmail: string;
  deliveryId: number;
  pngBytes: Buffer;
  /** A fresh 15-minute slot start (UTC) that no booking holds yet. */
  nextSlot(): string;
  call(headers: Headers, method: string, url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  ok<T = Record<string, unknown>>(headers: Headers, method: string, url: string, payload?: unknown): Promise<T>;
  confirmToken(bookingId: string): string;
  manage(bookingId: string): string;
}

const ALL_WEEK = {
  timezone: 'UTC',
  weekly: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '00:00', end: '24:00' })),
};

/** An event type body that books every 15 minutes, every day, 60 days ahead. */
export const eventTypeBody = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  duration_minutes: 15,
  availability: ALL_WEEK,
  max_advance_days: 60,
  ...extra,
});

export async function buildFixture(t: TestApp): Promise<Fixture> {
  const hex = randomBytes(4).toString('hex');
  const markers: Markers = { orgA: `zoa${hex}`, liveA: `zla${hex}`, orgB: `zob${hex}`, testA: `zta${hex}` };
  const app = t.app;
  const call = (headers: Headers, method: string, url: string, payload?: unknown): Promise<LightMyRequestResponse> => inject(app, headers, method as Method, url, payload);
  async function ok<T = Record<string, unknown>>(headers: Headers, method: string, url: string, payload?: unknown): Promise<T> {
    const res = await call(headers, method, url, payload);
    assert.ok(res.statusCode >= 200 && res.statusCode < 300, `fixture ${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json<T>();
  }
  // Slots from the day after the clock's start, 15 minutes apart; each handed out once.
  let slot = 0;
  const firstSlot = Date.parse('2026-01-06T00:00:00.000Z');
  const nextSlot = () => new Date(firstSlot + 15 * 60_000 * slot++).toISOString();

  const email = (name: string) => uniqueEmail(name.toLowerCase().replace(/[^a-z0-9]/g, ''));
  const named = (name: string, rest: Omit<PersonSpec, 'name' | 'email'> = {}): PersonSpec => ({ name, email: email(name), keys: { live: `${name} key` }, ...rest });
  const { people } = await castWorld(app, {
    people: {
      root: { name: 'Root' }, // the instance admin: first user
      owner: named(`${markers.orgA} Owner`, { plan: 'enterprise', keys: { live: `${markers.orgA} Owner key`, test: 'owner test key' } }),
      admin: named(`${markers.orgA} Admin`),
      member: named(`${markers.orgA} Member`),
      outsider: named(`${markers.orgB} Outsider`, { plan: 'agency' }),
    },
  });
  const asMember = (p: Person): Member => ({ ...p, liveKey: p.liveKey!, liveKeyId: p.liveKeyId! });
  const { root } = people;
  const owner = { ...asMember(people.owner), testKey: people.owner.testKey!, testKeyId: people.owner.testKeyId! };
  const [admin, mem, outsider] = [asMember(people.admin), asMember(people.member), asMember(people.outsider)];
  const oc = { cookie: owner.cookie };
  const liveA = { 'x-api-key': owner.liveKey };
  const testA = { 'x-api-key': owner.testKey };
  const bc = { cookie: outsider.cookie };

  // A live API key whose name only the owner's live credentials may see.
  await createKey(app, owner.cookie, 'live', `${markers.liveA} named key`);

  const inviteEmail = `${markers.orgA}-invite@example.com`;
  // The owner makes the team, so is in it already (issue 33).
  const { team: teamA, ...orgA } = await sharedOrg(app, {
    by: owner,
    name: `${markers.orgA} Org`,
    fields: { description: `${markers.orgA} about` },
    members: [
      { user: admin, role: 'admin' },
      { user: mem, role: 'member' },
      { user: { email: inviteEmail }, role: 'member' },
    ],
    team: { name: `${markers.orgA} Team`, fields: { description: `${markers.orgA} team` }, members: [mem] },
  });

  // Live records of org A, made through the API.
  const incident = await ok<{ Id: number; customer_token: string }>(liveA, 'POST', '/v1/tickets', {
    title: `${markers.liveA} incident`,
    description: `${markers.liveA} details`,
    org_id: orgA.id,
    location_name: `${markers.liveA} place`,
  });
  const reply = await ok<{ id: number }>(oc, 'POST', `/v1/incidents/${incident.Id}/replies`, { body: `${markers.liveA} reply`, public: false });
  const signal = await ok<{ Id: number }>(liveA, 'POST', '/v1/signals', { type: 'note', note: `${markers.liveA} note`, org_id: orgA.id, lat: 1, lng: 2 });
  await ok(liveA, 'POST', '/v1/signals', { type: 'beacon', org_id: orgA.id, lat: 1, lng: 2, meta: { device_id: `${markers.liveA}-device` } });
  // The webhook goes to a loopback address, which the SSRF guard refuses at delivery: a failed
  // delivery. Saving such a URL is refused, so it is set as one saved before that rule was.
  const et = await ok<{ id: number; slug: string }>(liveA, 'POST', '/v1/event-types', eventTypeBody(`${markers.liveA} Meeting`, { webhook_url: 'https://hooks.example.com/hook' }));
  await t.ctx.db.updateTable('event_types').set({ webhook_url: 'http://127.0.0.1:9/hook' }).where('id', '=', et.id).execute();
  const pendingEt = await ok<{ id: number; slug: string }>(liveA, 'POST', '/v1/event-types', eventTypeBody(`${markers.liveA} Request`, { requires_confirmation: true }));
  const teamEt = await ok<{ id: number; slug: string }>(liveA, 'POST', `/v1/orgs/${orgA.slug}/teams/${teamA}/event-types`, eventTypeBody(`${markers.liveA} Team Call`));
  const book = (etId: number) =>
    ok<{ id: string }>(liveA, 'POST', '/v1/bookings', {
      event_type_id: etId,
      attendee_name: `${markers.liveA} Attendee`,
      attendee_email: `${markers.liveA}-attendee@example.com`,
      start_time: nextSlot(),
      notes: `${markers.liveA} notes`,
    });
  const booking = await book(et.id);
  const toConfirm = (await book(pendingEt.id)).id;
  const toDecline = (await book(pendingEt.id)).id;
  const pushEndpoint = `https://push.example.com/${markers.orgA}-endpoint`;
  await ok(oc, 'POST', '/v1/push/subscriptions', { endpoint: pushEndpoint, keys: browserKeys().json });

  // The owner's deliveries: email notices of the bookings, the refused webhook.
  const deliveryId = (await ok<{ deliveries: { id: number }[] }>(liveA, 'GET', '/v1/deliveries?limit=200')).deliveries.at(-1)!.id;

  // The owner's calendar connections, one per mode (a private address: refused, an error status).
  await ok(liveA, 'POST', '/v1/calendars', { kind: 'ics', url: 'http://127.0.0.1:9/world.ics', name: `${markers.liveA} calendar` });
  await ok(testA, 'POST', '/v1/calendars', { kind: 'ics', url: 'http://127.0.0.1:9/world-test.ics', name: `${markers.testA} calendar` });
  await ok(testA, 'POST', '/v1/push/subscriptions', { endpoint: `https://push.example.com/${markers.testA}-endpoint`, keys: browserKeys().json });

  // Test-mode records in org A (orgs are shared by both modes).
  await ok(testA, 'POST', '/v1/tickets', { title: `${markers.testA} incident`, org_id: orgA.id });
  await ok(testA, 'POST', '/v1/signals', { type: 'note', note: `${markers.testA} note`, org_id: orgA.id });
  await ok(testA, 'POST', '/v1/event-types', eventTypeBody(`${markers.testA} Meeting`));

  // Org B: the outsider's own records.
  const orgB = await ok<{ id: number; slug: string }>(bc, 'POST', '/v1/orgs', { name: `${markers.orgB} Org` });
  await ok(bc, 'POST', `/v1/orgs/${orgB.slug}/teams`, { name: `${markers.orgB} Team` });
  const incB = await ok<{ Id: number }>(bc, 'POST', '/v1/tickets', { title: `${markers.orgB} incident`, org_id: orgB.id });
  await ok(bc, 'POST', `/v1/incidents/${incB.Id}/replies`, { body: `${markers.orgB} reply` });
  await ok(bc, 'POST', '/v1/signals', { type: 'note', note: `${markers.orgB} note`, org_id: orgB.id });
  const etB = await ok<{ id: number }>(bc, 'POST', '/v1/event-types', eventTypeBody(`${markers.orgB} Meeting`));
  await ok(bc, 'POST', '/v1/bookings', { event_type_id: etB.id, attendee_name: `${markers.orgB} Guest`, attendee_email: `${markers.orgB}@example.com`, start_time: nextSlot() });

  const pngBytes = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#c00' } }).png().toBuffer();

  return {
    t,
    markers,
    root,
    owner,
    admin,
    member: mem,
    outsider,
    orgA,
    orgB,
    teamA: teamA!,
    et,
    pendingEt,
    teamEt,
    incident,
    reply,
    signal,
    booking,
    toConfirm,
    toDecline,
    manageToken: signToken(t.ctx.secret, 'manage', booking.id),
    pushEndpoint,
    inviteEmail,
    deliveryId,
    pngBytes,
    nextSlot,
    call,
    ok,
    confirmToken: (id) => signToken(t.ctx.secret, 'confirm', id),
    manage: (id) => signToken(t.ctx.secret, 'manage', id),
  };
}

/** A multipart body with one `file` part. */
export function multipart(bytes: Buffer, filename = 'photo.png', type = 'image/png', field = 'file'): { payload: Buffer; headers: Headers } {
  const boundary = `----muster${randomBytes(6).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
  const payload = Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export { login, register };
