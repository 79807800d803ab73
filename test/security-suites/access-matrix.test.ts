// The access matrix of every documented operation, generated from /v1/openapi.json: each
// operation is called as org A's owner, admin and member (each by session cookie and by live
// key), a user of another org (B), the owner's test-mode key and anonymously, and must answer as
// docs/api.md says ("Access: 401, 403, 404"): non-member 404, insufficient role 403, anonymous 401 unless public, a
// record of the other mode 404. Every 2xx answer to a caller outside the record's tenant or mode is
// scanned for the markers that org A's records (or B's, or A's test-mode records) carry.
// An operation the table below does not classify fails the test, so a new route must be added here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp, type Headers } from '../helpers.js';
import { register, uniqueEmail } from '../factories.js';
import { browserKeys } from '../peers.js';
import { connectSse, eventOf, listen, type StreamEvent } from '../sse-client.js';
import { buildFixture, eventTypeBody, multipart, login, type Fixture } from './fixture.js';

type Role = 'owner' | 'admin' | 'member' | 'outsider' | 'otherMode' | 'anonymous';
interface Actor {
  name: string;
  role: Role;
  headers: Headers;
  /** The user behind the credential (none when anonymous). */
  user?: { email: string; password: string; id: number };
  via: 'cookie' | 'key' | 'none';
}
type Expect = Record<Role, number>;

interface Req {
  url: string;
  payload?: unknown;
  /** Replaces the actor's headers (logout runs on a session of its own). */
  headers?: Headers;
  /** A non-JSON body (multipart). */
  raw?: { payload: Buffer; headers: Headers };
}
interface Row {
  expect: Expect;
  req: (w: Fixture, a: Actor) => Req | Promise<Req>;
  /** Public by design: the answer may show what its token or slug names, so it is not scanned. */
  isPublic?: boolean;
  /** An SSE stream: called over a socket, read up to its first event. */
  stream?: boolean;
  /** The code of its 403 when it is not `forbidden` (a plan refusal). */
  code403?: string;
  /** Further checks of a 2xx answer. */
  then?: (res: LightMyRequestResponse, a: Actor, w: Fixture) => void | Promise<void>;
}

const REFUSAL_CODES: Partial<Record<number, string>> = { 401: 'unauthorized', 403: 'forbidden', 404: 'not_found' };

const all = (s: number): Expect => ({ owner: s, admin: s, member: s, outsider: s, otherMode: s, anonymous: s });
/** Any credential: each caller acts on their own things. */
const anyUser = (s: number, otherMode = s): Expect => ({ owner: s, admin: s, member: s, outsider: s, otherMode, anonymous: 401 });
/** Org A itself (shared by both modes): the test key acts as the owner. */
const orgRoute = (owner: number, admin: number, member: number): Expect => ({ owner, admin, member, outsider: 404, otherMode: owner, anonymous: 401 });
/** A live record of org A: the test key gets 404 like an outsider. */
const orgRecord = (owner: number, admin: number, member: number): Expect => ({ owner, admin, member, outsider: 404, otherMode: 404, anonymous: 401 });
/** A live record of the owner alone (keys, event types, bookings, deliveries). */
const ownerRecord = (s: number): Expect => ({ owner: s, admin: 404, member: 404, outsider: 404, otherMode: 404, anonymous: 401 });
/** Creating in org A: a non-member is refused with 403 (docs/api.md, "Access: 401, 403, 404" and "Incidents"). */
const createInOrg = (s: number): Expect => ({ owner: s, admin: s, member: s, outsider: 403, otherMode: s, anonymous: 401 });

const neutral = 'matrix call';
const guest = () => ({ attendee_name: 'Matrix Guest', attendee_email: uniqueEmail('guest'), timezone: 'UTC' });

/** A fresh live booking of the owner's event type. */
async function freshBooking(w: Fixture): Promise<string> {
  const b = await w.ok<{ id: string }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/bookings', { event_type_id: w.et.id, ...guest(), start_time: w.nextSlot() });
  return b.id;
}

/** The owner's live calendar connection (a private address: refused, so created at once with an error status). */
async function freshCalendar(w: Fixture): Promise<number> {
  return (await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/calendars', { kind: 'ics', url: 'http://127.0.0.1:9/matrix.ics', name: `${w.markers.liveA} calendar` })).id;
}

/** A fresh registered user, a member of org A. */
async function freshOrgMember(w: Fixture): Promise<number> {
  const u = await register(w.t.app, { name: 'Target User' });
  await w.ok({ cookie: w.owner.cookie }, 'POST', `/v1/orgs/${w.orgA.slug}/members`, { email: u.email, role: 'member' });
  return u.id;
}

/** A fresh live device of the owner in org A (POST /v1/devices with the live key). */
async function ownerDevice(w: Fixture): Promise<{ id: number; token: string }> {
  return w.ok<{ id: number; token: string }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/devices', { name: `${w.markers.liveA} tracker`, org_id: w.orgA.id });
}

const orgPath = (w: Fixture) => `/v1/orgs/${w.orgA.slug}`;
/** Org A's schedule (one per world), or a fresh one to delete; the member is on call in it. */
const schedules = new WeakMap<Fixture, Promise<number>>();
async function schedulePath(w: Fixture, fresh = false): Promise<string> {
  const make = () =>
    w
      .ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', `${orgPath(w)}/schedules`, {
        name: `${w.markers.orgA} rota`,
        time_zone: 'Europe/London',
        layers: [{ start: '2026-01-05T09:00', turn: { unit: 'week', length: 1 }, users: [w.member.id] }],
      })
      .then((s) => s.id);
  let id = fresh ? undefined : schedules.get(w);
  if (!id) {
    id = make();
    if (!fresh) schedules.set(w, id);
  }
  return `${orgPath(w)}/schedules/${await id}`;
}
/** An override of the member for tomorrow (by the world's clock). */
const overrideBody = (w: Fixture) => {
  const start = w.t.clock.nowMs() + 24 * 3_600_000;
  return { user_id: w.member.id, start: new Date(start).toISOString(), end: new Date(start + 3_600_000).toISOString() };
};

const teamPath = (w: Fixture) => `${orgPath(w)}/teams/${w.teamA}`;

/** Org A's escalation policy (one per world), or a fresh one to delete: it pages the member. */
const policies = new WeakMap<Fixture, Promise<number>>();
async function policyPath(w: Fixture, fresh = false): Promise<string> {
  const make = () =>
    w
      .ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', `${orgPath(w)}/escalation-policies`, {
        name: `${w.markers.orgA} policy`,
        levels: [{ delay_minutes: 5, targets: [{ type: 'user', id: w.member.id }] }],
      })
      .then((p) => p.id);
  let id = fresh ? undefined : policies.get(w);
  if (!id) {
    id = make();
    if (!fresh) policies.set(w, id);
  }
  return `${orgPath(w)}/escalation-policies/${await id}`;
}

const subscriptions = new WeakMap<Fixture, Promise<number>>();
/** A live incident subscription of org A (its URL then made a loopback literal, so "send test" is refused at once, never leaving the machine). */
async function subscriptionPath(w: Fixture, fresh = false): Promise<string> {
  const make = async () => {
    const s = await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', `${orgPath(w)}/webhooks`, {
      url: 'https://hooks.example.com/matrix',
      events: ['incident.created'],
      format: 'standard',
      description: `${w.markers.orgA} hook`,
    });
    await w.t.ctx.db.updateTable('incident_subscriptions').set({ url: 'https://127.0.0.1:9/matrix' }).where('id', '=', s.id).execute();
    return s.id;
  };
  let id = fresh ? undefined : subscriptions.get(w);
  if (!id) {
    id = make();
    if (!fresh) subscriptions.set(w, id);
  }
  return `${orgPath(w)}/webhooks/${await id}`;
}

const INCIDENT_ROWS = (base: '/v1/tickets' | '/v1/incidents'): Record<string, Row> => ({
  [`POST ${base}`]: { expect: createInOrg(201), req: (w) => ({ url: base, payload: { title: neutral, org_id: w.orgA.id } }) },
  [`GET ${base}`]: { expect: anyUser(200), req: () => ({ url: `${base}?limit=200` }) },
  [`GET ${base}/stream`]: { expect: anyUser(200), stream: true, req: () => ({ url: `${base}/stream` }) },
  [`GET ${base}/{id}`]: { expect: orgRecord(200, 200, 200), req: (w) => ({ url: `${base}/${w.incident.Id}` }) },
  [`PATCH ${base}/{id}`]: { expect: orgRecord(200, 200, 200), req: (w) => ({ url: `${base}/${w.incident.Id}`, payload: { status: 'in_progress' } }) },
  [`DELETE ${base}/{id}`]: {
    expect: orgRecord(200, 200, 403),
    req: async (w) => {
      const inc = await w.ok<{ Id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', base, { title: `${w.markers.liveA} doomed`, org_id: w.orgA.id });
      return { url: `${base}/${inc.Id}` };
    },
  },
  [`GET ${base}/{id}/replies`]: { expect: orgRecord(200, 200, 200), req: (w) => ({ url: `${base}/${w.incident.Id}/replies` }) },
  [`GET ${base}/{id}/timeline`]: { expect: orgRecord(200, 200, 200), req: (w) => ({ url: `${base}/${w.incident.Id}/timeline` }) },
  [`GET ${base}/{id}/responders`]: { expect: orgRecord(200, 200, 200), req: (w) => ({ url: `${base}/${w.incident.Id}/responders` }) },
  // The world's incident has no assignee: admins and owners may act on it, a member may not.
  [`POST ${base}/{id}/acknowledge`]: { expect: orgRecord(200, 200, 403), req: (w) => ({ url: `${base}/${w.incident.Id}/acknowledge` }) },
  [`POST ${base}/{id}/progress`]: { expect: orgRecord(201, 201, 403), req: (w) => ({ url: `${base}/${w.incident.Id}/progress`, payload: { state: 'en_route' } }) },
  [`POST ${base}/{id}/replies`]: { expect: orgRecord(201, 201, 201), req: (w) => ({ url: `${base}/${w.incident.Id}/replies`, payload: { body: neutral } }) },
  // Paging by hand (issue #36): admins and owners, or the assignee (the world's incident has none).
  // A fresh incident each time: whoever is paged may acknowledge it (so the world's incident stays unpaged).
  [`POST ${base}/{id}/page`]: {
    expect: orgRecord(201, 201, 403),
    req: async (w) => {
      const inc = await w.ok<{ Id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', base, { title: `${w.markers.liveA} paged`, org_id: w.orgA.id });
      return { url: `${base}/${inc.Id}/page`, payload: { user_ids: [w.member.id] } };
    },
  },
  // The walk by hand (issue #36): admins and owners, or the assignee; a fresh incident following org A's policy.
  [`POST ${base}/{id}/escalate`]: {
    expect: orgRecord(200, 200, 403),
    req: async (w) => {
      const policyId = Number((await policyPath(w)).split('/').pop());
      const inc = await w.ok<{ Id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', base, { title: `${w.markers.liveA} escalated`, org_id: w.orgA.id, priority: 'normal', escalation_policy_id: policyId });
      return { url: `${base}/${inc.Id}/escalate` };
    },
  },
  // Undoing an automatic arrival (issue #38): the assignee, admins and owners; the world's incident has none to undo (409).
  [`POST ${base}/{id}/arrival/undo`]: { expect: orgRecord(409, 409, 403), req: (w) => ({ url: `${base}/${w.incident.Id}/arrival/undo` }) },
  [`GET ${base}/status/{token}`]: { expect: all(200), isPublic: true, req: (w) => ({ url: `${base}/status/${w.incident.customer_token}` }) },
});

const PUBLIC_BOOKING = (path: (w: Fixture) => string): Row => ({
  expect: all(201),
  isPublic: true,
  req: (w) => ({ url: path(w), payload: { ...guest(), start_time: w.nextSlot() } }),
});

/** One live integration of org A per world, made by its owner: the key the ingest rows post with. */
const integrationKeys = new WeakMap<Fixture, Promise<string>>();
function integrationKey(w: Fixture): Promise<string> {
  let key = integrationKeys.get(w);
  if (!key) {
    key = w.ok<{ key: string }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/integrations', { name: neutral, org_id: w.orgA.id }).then((i) => i.key);
    integrationKeys.set(w, key);
  }
  return key;
}
/** One live heartbeat of org A per world: the key its ping rows use. */
const heartbeatKeys = new WeakMap<Fixture, Promise<string>>();
function heartbeatKey(w: Fixture): Promise<string> {
  let key = heartbeatKeys.get(w);
  if (!key) {
    key = w.ok<{ key: string }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/integrations', { name: neutral, org_id: w.orgA.id, type: 'heartbeat', interval_seconds: 300 }).then((i) => i.key);
    heartbeatKeys.set(w, key);
  }
  return key;
}
/** A live site of org A, made by its owner. */
async function sitePath(w: Fixture): Promise<string> {
  const made = await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', `${orgPath(w)}/sites`, { name: neutral, lat: 52.52, lng: 13.4, radius_m: 200 });
  return `${orgPath(w)}/sites/${made.id}`;
}
/** A live maintenance window of org A, made by its owner. */
async function windowPath(w: Fixture): Promise<string> {
  const start = w.t.clock.nowMs() + 86_400_000;
  const made = await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', `${orgPath(w)}/maintenance-windows`, { start: new Date(start).toISOString(), end: new Date(start + 3_600_000).toISOString() });
  return `${orgPath(w)}/maintenance-windows/${made.id}`;
}
const pdEvent = { event_action: 'trigger', dedup_key: 'matrix', payload: { summary: neutral, source: 'matrix', severity: 'info' } };
const amEvent = { version: '4', status: 'firing', alerts: [{ status: 'firing', labels: { alertname: 'Matrix' }, fingerprint: 'matrix' }] };
/** Posted by a tool: the key is the credential, whoever else calls (public). */
const ingest = (status: number, path: (key: string) => string, payload: object, byHeader = false): Row => ({
  expect: all(status),
  isPublic: true,
  req: async (w) => {
    const key = await integrationKey(w);
    return { url: path(key), payload: path === enqueuePath ? { ...payload, routing_key: key } : payload, ...(byHeader ? { headers: { authorization: `Bearer ${key}` } } : {}) };
  },
});
const enqueuePath = () => '/v2/enqueue';

const ROWS: Record<string, Row> = {
  'GET /healthz': { expect: all(200), isPublic: true, req: () => ({ url: '/healthz' }) },
  'GET /readyz': { expect: all(200), isPublic: true, req: () => ({ url: '/readyz' }) },
  // Issue #22: without METRICS_TOKEN (as here) /metrics does not exist for anyone.
  'GET /metrics': { expect: all(404), isPublic: true, req: () => ({ url: '/metrics' }) },
  'GET /v1/auth/me/export': {
    expect: anyUser(200),
    req: () => ({ url: '/v1/auth/me/export' }),
    then: (res, a) => assert.equal(res.json<{ profile: { id: number } }>().profile.id, a.user!.id, `${a.name}: the export is the caller's`),
  },
  // A wrong password: every account of the world stays.
  'DELETE /v1/auth/me': { expect: all(401), req: () => ({ url: '/v1/auth/me', payload: { password: 'not the password' } }) },

  // Users and authentication
  'POST /v1/users': { expect: all(201), isPublic: true, req: () => ({ url: '/v1/users', payload: { email: uniqueEmail('new'), password: 'correct horse battery', name: 'New User' } }) },
  'GET /v1/users': { expect: anyUser(403), req: () => ({ url: '/v1/users' }) },
  'PATCH /v1/users/{id}': { expect: anyUser(403), req: (w) => ({ url: `/v1/users/${w.owner.id}`, payload: { plan: 'enterprise' } }) },
  'GET /v1/admin/settings': { expect: anyUser(403), req: () => ({ url: '/v1/admin/settings' }) },
  'PATCH /v1/admin/settings': { expect: anyUser(403), req: () => ({ url: '/v1/admin/settings', payload: { default_plan: 'enterprise' } }) },
  'GET /v1/u/{slug}': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/u/${w.owner.slug}` }) },
  'POST /v1/auth/login': { expect: all(200), isPublic: true, req: (w) => ({ url: '/v1/auth/login', payload: { email: w.root.email, password: w.root.password } }) },
  'POST /v1/auth/logout': {
    expect: all(200),
    isPublic: true,
    // A session of its own, so the actor's cookie keeps working for the other rows.
    req: async (w, a) => ({ url: '/v1/auth/logout', ...(a.via === 'cookie' ? { headers: { cookie: await login(w.t.app, a.user!.email, a.user!.password) } } : {}) }),
  },
  'GET /v1/auth/me': {
    expect: anyUser(200),
    req: () => ({ url: '/v1/auth/me' }),
    then: (res, a) => assert.equal(res.json<{ id: number }>().id, a.user!.id, `${a.name}: /me is the caller`),
  },
  'PATCH /v1/auth/me': { expect: anyUser(200), req: () => ({ url: '/v1/auth/me', payload: { timezone: 'UTC' } }) },
  'POST /v1/auth/magic-link': { expect: all(200), isPublic: true, req: (w) => ({ url: '/v1/auth/magic-link', payload: { email: w.root.email } }) },
  'POST /v1/auth/magic-link/verify': { expect: all(401), isPublic: true, req: () => ({ url: '/v1/auth/magic-link/verify', payload: { email: uniqueEmail('nobody'), code: '000000' } }) },
  // A wrong current password: the world's passwords and sessions stay as they are.
  'POST /v1/auth/password': { expect: all(401), req: () => ({ url: '/v1/auth/password', payload: { current_password: 'not the password', new_password: 'a new password' } }) },
  'POST /v1/auth/password-reset': { expect: all(200), isPublic: true, req: () => ({ url: '/v1/auth/password-reset', payload: { email: uniqueEmail('nobody') } }) },
  'POST /v1/auth/password-reset/verify': {
    expect: all(401),
    isPublic: true,
    req: () => ({ url: '/v1/auth/password-reset/verify', payload: { email: uniqueEmail('nobody'), code: '000000', new_password: 'a new password' } }),
  },
  'POST /v1/auth/verify-email': { expect: all(401), isPublic: true, req: () => ({ url: '/v1/auth/verify-email', payload: { email: uniqueEmail('nobody'), code: '000000' } }) },
  'POST /v1/auth/verify-email/resend': { expect: all(200), isPublic: true, req: (w) => ({ url: '/v1/auth/verify-email/resend', payload: { email: w.root.email } }) },
  // Invite links: an unknown token is 404 for everyone (a known one is tested in src/modules/orgs/invites.test.ts).
  'GET /v1/invites/{token}': { expect: all(404), isPublic: true, req: () => ({ url: '/v1/invites/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }) },
  'POST /v1/invites/{token}/accept': { expect: anyUser(404), req: () => ({ url: '/v1/invites/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/accept' }) },

  // API keys: a test key may not mint a live one (docs/api.md)
  'POST /v1/api-keys': { expect: anyUser(201, 403), req: () => ({ url: '/v1/api-keys', payload: { name: neutral, mode: 'live' } }) },
  'GET /v1/api-keys': { expect: anyUser(200), req: () => ({ url: '/v1/api-keys' }) },
  'DELETE /v1/api-keys/{id}': {
    expect: ownerRecord(200),
    req: async (w) => {
      const k = await w.ok<{ id: number }>({ cookie: w.owner.cookie }, 'POST', '/v1/api-keys', { name: `${w.markers.liveA} doomed`, mode: 'live' });
      return { url: `/v1/api-keys/${k.id}` };
    },
  },

  // Orgs, members, teams (shared by both modes)
  'POST /v1/orgs': {
    // Only the enterprise owner may make another org; the free admin and member and the agency
    // outsider (who has one already) are refused by plan.
    expect: { owner: 201, admin: 403, member: 403, outsider: 403, otherMode: 201, anonymous: 401 },
    code403: 'upgrade_required',
    req: () => ({ url: '/v1/orgs', payload: { name: neutral } }),
    then: (res) => assert.equal(res.json<{ role: string }>().role, 'owner'),
  },
  'GET /v1/orgs': { expect: anyUser(200), req: () => ({ url: '/v1/orgs' }) },
  'GET /v1/orgs/{org_slug}': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: orgPath(w) }) },
  // With a retention setting (issue #22; null keeps forever, as without one): owners only, like the rest.
  'PATCH /v1/orgs/{org_slug}': {
    expect: orgRoute(200, 403, 403),
    req: (w) => ({ url: orgPath(w), payload: { description: `${w.markers.orgA} about`, retention: { signals_days: null } } }),
  },
  'DELETE /v1/orgs/{org_slug}': {
    expect: orgRoute(200, 403, 403),
    req: async (w) => {
      const oc = { cookie: w.owner.cookie };
      const org = await w.ok<{ slug: string }>(oc, 'POST', '/v1/orgs', { name: `${w.markers.orgA} doomed` });
      await w.ok(oc, 'POST', `/v1/orgs/${org.slug}/members`, { email: w.admin.email, role: 'admin' });
      await w.ok(oc, 'POST', `/v1/orgs/${org.slug}/members`, { email: w.member.email, role: 'member' });
      return { url: `/v1/orgs/${org.slug}` };
    },
  },
  'GET /v1/orgs/{org_slug}/dispatch': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/dispatch` }) },
  'PATCH /v1/orgs/{org_slug}/dispatch': { expect: orgRoute(200, 200, 403), req: (w) => ({ url: `${orgPath(w)}/dispatch`, payload: { ack_timeout_minutes: { high: 15 } } }) },
  // On-call schedules (issue #35): org configuration, shared by both modes; members read, admins write.
  'POST /v1/orgs/{org_slug}/schedules': { expect: orgRoute(201, 201, 403), req: (w) => ({ url: `${orgPath(w)}/schedules`, payload: { name: neutral, time_zone: 'UTC', layers: [] } }) },
  'GET /v1/orgs/{org_slug}/schedules': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/schedules` }) },
  'GET /v1/orgs/{org_slug}/on-call': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/on-call` }) },
  'GET /v1/orgs/{org_slug}/schedules/{schedule}': { expect: orgRoute(200, 200, 200), req: async (w) => ({ url: await schedulePath(w) }) },
  'PATCH /v1/orgs/{org_slug}/schedules/{schedule}': { expect: orgRoute(200, 200, 403), req: async (w) => ({ url: await schedulePath(w), payload: { description: `${w.markers.orgA} rota` } }) },
  'DELETE /v1/orgs/{org_slug}/schedules/{schedule}': { expect: orgRoute(200, 200, 403), req: async (w) => ({ url: await schedulePath(w, true) }) },
  ...Object.fromEntries(
    ['on-call', 'shifts', 'timeline', 'overrides', 'feed'].map((sub): [string, Row] => [
      `GET /v1/orgs/{org_slug}/schedules/{schedule}/${sub}`,
      { expect: orgRoute(200, 200, 200), req: async (w) => ({ url: `${await schedulePath(w)}/${sub}` }) },
    ]),
  ),
  'POST /v1/orgs/{org_slug}/schedules/{schedule}/overrides': {
    expect: orgRoute(201, 201, 403),
    req: async (w) => ({ url: `${await schedulePath(w)}/overrides`, payload: overrideBody(w) }),
  },
  'DELETE /v1/orgs/{org_slug}/schedules/{schedule}/overrides/{id}': {
    expect: orgRoute(200, 200, 403),
    req: async (w) => {
      const path = await schedulePath(w);
      const o = await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', `${path}/overrides`, overrideBody(w));
      return { url: `${path}/overrides/${o.id}` };
    },
  },
  'POST /v1/orgs/{org_slug}/schedules/{schedule}/feed/rotate': { expect: orgRoute(200, 200, 403), req: async (w) => ({ url: `${await schedulePath(w)}/feed/rotate` }) },
  'GET /v1/auth/me/shifts': { expect: anyUser(200), req: () => ({ url: '/v1/auth/me/shifts' }) },
  // Paging (issue #36): escalation policies are org configuration like schedules; the rules and the phone proof are each person's own.
  'POST /v1/orgs/{org_slug}/escalation-policies': {
    expect: orgRoute(201, 201, 403),
    req: (w) => ({ url: `${orgPath(w)}/escalation-policies`, payload: { name: neutral, levels: [{ delay_minutes: 5, targets: [{ type: 'user', id: w.member.id }] }] } }),
  },
  'GET /v1/orgs/{org_slug}/escalation-policies': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/escalation-policies` }) },
  'GET /v1/orgs/{org_slug}/escalation-policies/{id}': { expect: orgRoute(200, 200, 200), req: async (w) => ({ url: await policyPath(w) }) },
  'PATCH /v1/orgs/{org_slug}/escalation-policies/{id}': { expect: orgRoute(200, 200, 403), req: async (w) => ({ url: await policyPath(w), payload: { repeat: 1 } }) },
  'DELETE /v1/orgs/{org_slug}/escalation-policies/{id}': { expect: orgRoute(200, 200, 403), req: async (w) => ({ url: await policyPath(w, true) }) },
  // Incident subscriptions (issue #37): admins and owners only (the URL is itself a credential), each in its mode.
  'POST /v1/orgs/{org_slug}/webhooks': {
    expect: orgRoute(201, 201, 403),
    req: (w) => ({ url: `${orgPath(w)}/webhooks`, payload: { url: 'https://hooks.example.com/new', events: ['incident.created'], format: 'chat', description: neutral } }),
  },
  'GET /v1/orgs/{org_slug}/webhooks': { expect: orgRoute(200, 200, 403), req: (w) => ({ url: `${orgPath(w)}/webhooks` }) },
  'GET /v1/orgs/{org_slug}/webhooks/{id}': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: await subscriptionPath(w) }) },
  'PATCH /v1/orgs/{org_slug}/webhooks/{id}': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: await subscriptionPath(w), payload: { events: ['incident.created', 'incident.resolved'] } }) },
  'DELETE /v1/orgs/{org_slug}/webhooks/{id}': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: await subscriptionPath(w, true) }) },
  'POST /v1/orgs/{org_slug}/webhooks/{id}/test': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: `${await subscriptionPath(w)}/test` }) },
  'GET /v1/auth/me/notification-rules': { expect: anyUser(200), req: () => ({ url: '/v1/auth/me/notification-rules' }) },
  'GET /v1/auth/me/pages': { expect: anyUser(200), req: () => ({ url: '/v1/auth/me/pages' }) },
  'PUT /v1/auth/me/notification-rules': { expect: anyUser(200), req: () => ({ url: '/v1/auth/me/notification-rules', payload: { high: [{ channel: 'push', delay_minutes: 0 }], low: [] } }) },
  // Nobody here has a number waiting for its code: 422 on `code` for every caller.
  'POST /v1/auth/me/phone/verify': { expect: anyUser(422), req: () => ({ url: '/v1/auth/me/phone/verify', payload: { code: '000000' } }) },
  // Twilio's webhooks: their signature is the credential (no Twilio configured here: 401 to everyone).
  'POST /v1/providers/twilio/sms': { expect: all(401), isPublic: true, req: () => ({ url: '/v1/providers/twilio/sms', payload: { From: '+14155550100', Body: '4' } }) },
  'POST /v1/providers/twilio/voice': { expect: all(401), isPublic: true, req: () => ({ url: '/v1/providers/twilio/voice?token=x', payload: { CallSid: 'CA1' } }) },
  // A notification's action token is the credential: a forged one is 404 to everyone.
  'POST /v1/actions/{token}': { expect: all(404), isPublic: true, req: () => ({ url: '/v1/actions/1.2.3.push.zz.AAAAAAAA', payload: { action: 'acknowledge' } }) },
  // The schedule's feed: the secret link is the credential.
  'GET /calendar/schedules/{token}': {
    expect: all(200),
    isPublic: true,
    req: async (w) => {
      const { url } = await w.ok<{ url: string }>({ 'x-api-key': w.owner.liveKey }, 'GET', `${await schedulePath(w)}/feed`);
      return { url: new URL(url).pathname };
    },
  },
  'GET /v1/orgs/{org_slug}/members': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/members` }) },
  'GET /v1/orgs/{org_slug}/retention': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/retention` }) },
  'DELETE /v1/orgs/{org_slug}/members/{user_id}/signals': {
    expect: orgRoute(200, 403, 403),
    req: async (w) => ({ url: `${orgPath(w)}/members/${await freshOrgMember(w)}/signals` }),
  },
  'POST /v1/orgs/{org_slug}/members': { expect: orgRoute(201, 201, 403), req: (w) => ({ url: `${orgPath(w)}/members`, payload: { email: uniqueEmail('invitee'), role: 'member' } }) },
  'PATCH /v1/orgs/{org_slug}/members/{user_id}': {
    expect: orgRoute(200, 200, 403),
    req: async (w) => ({ url: `${orgPath(w)}/members/${await freshOrgMember(w)}`, payload: { role: 'admin' } }),
  },
  'DELETE /v1/orgs/{org_slug}/members/{user_id}': {
    expect: orgRoute(200, 200, 403),
    req: async (w) => ({ url: `${orgPath(w)}/members/${await freshOrgMember(w)}` }),
  },
  'POST /v1/orgs/{org_slug}/teams': { expect: orgRoute(201, 201, 403), req: (w) => ({ url: `${orgPath(w)}/teams`, payload: { name: neutral } }) },
  'GET /v1/orgs/{org_slug}/teams': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/teams` }) },
  'PATCH /v1/orgs/{org_slug}/teams/{team_slug}': { expect: orgRoute(200, 200, 403), req: (w) => ({ url: teamPath(w), payload: { description: `${w.markers.orgA} team` } }) },
  'DELETE /v1/orgs/{org_slug}/teams/{team_slug}': {
    expect: orgRoute(200, 200, 403),
    req: async (w) => {
      const team = await w.ok<{ slug: string }>({ cookie: w.owner.cookie }, 'POST', `${orgPath(w)}/teams`, { name: `${w.markers.orgA} doomed` });
      return { url: `${orgPath(w)}/teams/${team.slug}` };
    },
  },
  'GET /v1/orgs/{org_slug}/teams/{team_slug}/members': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${teamPath(w)}/members` }) },
  'POST /v1/orgs/{org_slug}/teams/{team_slug}/members': {
    expect: orgRoute(201, 201, 403),
    req: async (w) => ({ url: `${teamPath(w)}/members`, payload: { user_id: await freshOrgMember(w) } }),
  },
  'PATCH /v1/orgs/{org_slug}/teams/{team_slug}/members/{user_id}': {
    expect: orgRoute(200, 200, 403),
    req: async (w) => {
      const id = await freshOrgMember(w);
      await w.ok({ cookie: w.owner.cookie }, 'POST', `${teamPath(w)}/members`, { user_id: id });
      return { url: `${teamPath(w)}/members/${id}`, payload: { active: false } };
    },
  },
  'DELETE /v1/orgs/{org_slug}/teams/{team_slug}/members/{user_id}': {
    expect: orgRoute(200, 200, 403),
    req: async (w) => {
      const id = await freshOrgMember(w);
      await w.ok({ cookie: w.owner.cookie }, 'POST', `${teamPath(w)}/members`, { user_id: id });
      return { url: `${teamPath(w)}/members/${id}` };
    },
  },

  ...INCIDENT_ROWS('/v1/tickets'),
  ...INCIDENT_ROWS('/v1/incidents'),

  // Integrations (incident sources): org admins manage them; tools post with the key.
  'POST /v1/integrations': { expect: { owner: 201, admin: 201, member: 403, outsider: 403, otherMode: 201, anonymous: 401 }, req: (w) => ({ url: '/v1/integrations', payload: { name: neutral, org_id: w.orgA.id } }) },
  'GET /v1/integrations': { expect: anyUser(200), req: () => ({ url: '/v1/integrations' }) },
  // Mail received for the orgs one administers (a member's list is empty; naming org A takes adminship).
  'GET /v1/inbound-emails': { expect: { owner: 200, admin: 200, member: 403, outsider: 403, otherMode: 200, anonymous: 401 }, req: (w) => ({ url: `/v1/inbound-emails?org_id=${w.orgA.id}` }) },
  'PATCH /v1/integrations/{id}': {
    expect: orgRecord(200, 200, 403),
    req: async (w) => {
      const i = await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/integrations', { name: neutral, org_id: w.orgA.id });
      return { url: `/v1/integrations/${i.id}`, payload: { name: neutral } };
    },
  },
  'DELETE /v1/integrations/{id}': {
    expect: orgRecord(200, 200, 403),
    req: async (w) => {
      const i = await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/integrations', { name: neutral, org_id: w.orgA.id });
      return { url: `/v1/integrations/${i.id}` };
    },
  },
  'POST /v1/integrations/{key}/events': ingest(202, (k) => `/v1/integrations/${k}/events`, pdEvent),
  'POST /v2/enqueue': ingest(202, enqueuePath, pdEvent),
  'POST /v1/integrations/{key}/alertmanager': ingest(200, (k) => `/v1/integrations/${k}/alertmanager`, amEvent),
  'POST /v1/integrations/{key}/grafana': ingest(200, (k) => `/v1/integrations/${k}/grafana`, amEvent),
  'POST /v1/integrations/alertmanager': ingest(200, () => '/v1/integrations/alertmanager', amEvent, true),
  'POST /v1/integrations/grafana': ingest(200, () => '/v1/integrations/grafana', amEvent, true),
  // Heartbeats (issue #37): a ping's key is its credential; the event log is the integration's admins'.
  'GET /v1/integrations/{key}/heartbeat': { expect: all(200), isPublic: true, req: async (w) => ({ url: `/v1/integrations/${await heartbeatKey(w)}/heartbeat` }) },
  'POST /v1/integrations/{key}/heartbeat': { expect: all(200), isPublic: true, req: async (w) => ({ url: `/v1/integrations/${await heartbeatKey(w)}/heartbeat`, payload: { any: 'body' } }) },
  'GET /v1/integrations/{id}/events': {
    expect: orgRecord(200, 200, 403),
    req: async (w) => {
      const i = await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/integrations', { name: neutral, org_id: w.orgA.id });
      return { url: `/v1/integrations/${i.id}/events` };
    },
  },
  // Maintenance windows: members read them (the incidents page's banner); admins and owners plan them, per mode.
  'POST /v1/orgs/{org_slug}/maintenance-windows': {
    expect: orgRoute(201, 201, 403),
    req: (w) => ({ url: `${orgPath(w)}/maintenance-windows`, payload: { start: new Date(w.t.clock.nowMs() + 86_400_000).toISOString(), end: new Date(w.t.clock.nowMs() + 90_000_000).toISOString(), description: neutral } }),
  },
  'GET /v1/orgs/{org_slug}/maintenance-windows': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/maintenance-windows` }) },
  // Sites (#38): admins and owners write, members read; a site belongs to its mode.
  'POST /v1/orgs/{org_slug}/sites': { expect: orgRoute(201, 201, 403), req: (w) => ({ url: `${orgPath(w)}/sites`, payload: { name: neutral, lat: 52.52, lng: 13.4, radius_m: 200 } }) },
  'GET /v1/orgs/{org_slug}/sites': { expect: orgRoute(200, 200, 200), req: (w) => ({ url: `${orgPath(w)}/sites` }) },
  'GET /v1/orgs/{org_slug}/sites/{id}': { expect: orgRecord(200, 200, 200), req: async (w) => ({ url: await sitePath(w) }) },
  'PATCH /v1/orgs/{org_slug}/sites/{id}': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: await sitePath(w), payload: { name: neutral } }) },
  'DELETE /v1/orgs/{org_slug}/sites/{id}': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: await sitePath(w) }) },
  // Reports (#39): admins and owners; the test key reads the test incidents of the same org.
  'GET /v1/orgs/{org_slug}/reports/incidents': { expect: orgRoute(200, 200, 403), req: (w) => ({ url: `${orgPath(w)}/reports/incidents?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z` }) },
  'GET /v1/orgs/{org_slug}/reports/oncall': { expect: orgRoute(200, 200, 403), req: (w) => ({ url: `${orgPath(w)}/reports/oncall?from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z` }) },
  'PATCH /v1/orgs/{org_slug}/maintenance-windows/{id}': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: await windowPath(w), payload: { description: neutral } }) },
  'DELETE /v1/orgs/{org_slug}/maintenance-windows/{id}': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: await windowPath(w) }) },

  // Signals
  'POST /v1/signals': { expect: createInOrg(201), req: (w) => ({ url: '/v1/signals', payload: { type: 'note', note: neutral, org_id: w.orgA.id } }) },
  'GET /v1/signals': { expect: anyUser(200), req: () => ({ url: '/v1/signals?limit=200' }) },
  'GET /v1/signals/beacons': { expect: anyUser(200), req: () => ({ url: '/v1/signals/beacons' }) },
  'GET /v1/signals/alert-reach': { expect: createInOrg(200), req: (w) => ({ url: `/v1/signals/alert-reach?org_id=${w.orgA.id}` }) },
  'DELETE /v1/signals/beacon': {
    expect: anyUser(200),
    req: () => ({ url: '/v1/signals/beacon', payload: { device_id: 'matrix-device' } }),
  },
  'GET /v1/signals/stream': { expect: anyUser(200), stream: true, req: () => ({ url: '/v1/signals/stream' }) },
  'GET /v1/audit': { expect: { ...orgRoute(200, 200, 403) }, req: (w) => ({ url: `/v1/audit?org_id=${w.orgA.id}` }) },

  // Event types
  'POST /v1/event-types': { expect: anyUser(201), req: () => ({ url: '/v1/event-types', payload: eventTypeBody(neutral) }) },
  'GET /v1/event-types': { expect: anyUser(200), req: () => ({ url: '/v1/event-types' }) },
  'POST /v1/orgs/{org_slug}/teams/{team_slug}/event-types': { expect: orgRoute(201, 201, 403), req: (w) => ({ url: `${teamPath(w)}/event-types`, payload: eventTypeBody(neutral) }) },
  'GET /v1/event-types/{id}': { expect: ownerRecord(200), req: (w) => ({ url: `/v1/event-types/${w.et.id}` }) },
  'PATCH /v1/event-types/{id}': { expect: ownerRecord(200), req: (w) => ({ url: `/v1/event-types/${w.et.id}`, payload: { description: `${w.markers.liveA} about` } }) },
  'DELETE /v1/event-types/{id}': {
    expect: ownerRecord(200),
    req: async (w) => {
      const et = await w.ok<{ id: number }>({ 'x-api-key': w.owner.liveKey }, 'POST', '/v1/event-types', eventTypeBody(`${w.markers.liveA} doomed`));
      return { url: `/v1/event-types/${et.id}` };
    },
  },

  // Deliveries, push, calendar
  'GET /v1/deliveries': { expect: anyUser(200), req: () => ({ url: '/v1/deliveries?limit=200' }) },
  'POST /v1/deliveries/{id}/retry': {
    expect: ownerRecord(200),
    req: async (w) => {
      // Only a failed delivery can be retried: mark the owner's delivery failed for each call.
      await w.t.ctx.db.updateTable('outbox').set({ status: 'failed' }).where('id', '=', w.deliveryId).execute();
      return { url: `/v1/deliveries/${w.deliveryId}/retry` };
    },
  },
  'GET /v1/push/public-key': { expect: all(200), isPublic: true, req: () => ({ url: '/v1/push/public-key' }) },
  'POST /v1/push/subscriptions': {
    expect: anyUser(201),
    req: () => ({ url: '/v1/push/subscriptions', payload: { endpoint: `https://push.example.com/${uniqueEmail('sub')}`, keys: browserKeys().json } }),
  },
  'DELETE /v1/push/subscriptions': { expect: anyUser(200), req: () => ({ url: '/v1/push/subscriptions', payload: { endpoint: 'https://push.example.com/none' } }) },
  // The private feed lists live bookings: a live record of its user, 404 to a test key (issue #31, F3).
  'GET /v1/calendar': { expect: anyUser(200, 404), req: () => ({ url: '/v1/calendar' }) },
  'POST /v1/calendar/rotate': { expect: anyUser(200, 404), req: () => ({ url: '/v1/calendar/rotate' }) },
  // The feed itself: the secret link is the credential, so every caller (anonymous too) gets the owner's feed.
  'GET /calendar/{token}': {
    expect: all(200),
    isPublic: true,
    req: async (w) => {
      const { url } = await w.ok<{ url: string }>({ 'x-api-key': w.owner.liveKey }, 'GET', '/v1/calendar');
      return { url: new URL(url).pathname };
    },
  },

  // External calendars (issue #18): a user's own connections, in the mode of the key that made them
  // (issue #31, F3): the owner's test key gets 404 for a live one, like any live record.
  'POST /v1/calendars': { expect: anyUser(201), req: () => ({ url: '/v1/calendars', payload: { kind: 'ics', url: 'http://127.0.0.1:9/matrix.ics', name: neutral } }) },
  'GET /v1/calendars': { expect: anyUser(200), req: () => ({ url: '/v1/calendars' }) },
  'GET /v1/calendars/busy': { expect: anyUser(200), req: () => ({ url: '/v1/calendars/busy?from=2026-01-01T00:00:00Z&to=2026-01-08T00:00:00Z' }) },
  'GET /v1/calendars/{id}': { expect: ownerRecord(200), req: async (w) => ({ url: `/v1/calendars/${await freshCalendar(w)}` }) },
  'PATCH /v1/calendars/{id}': { expect: ownerRecord(200), req: async (w) => ({ url: `/v1/calendars/${await freshCalendar(w)}`, payload: { name: neutral } }) },
  'DELETE /v1/calendars/{id}': { expect: ownerRecord(200), req: async (w) => ({ url: `/v1/calendars/${await freshCalendar(w)}` }) },
  'POST /v1/calendars/{id}/sync': { expect: ownerRecord(200), req: async (w) => ({ url: `/v1/calendars/${await freshCalendar(w)}/sync` }) },

  // Availability and bookings
  'GET /v1/availability': { expect: ownerRecord(200), req: (w) => ({ url: `/v1/availability?event_type_id=${w.et.id}&date=2026-01-20` }) },
  'GET /v1/slots/{username}/{event_slug}': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/slots/${w.owner.slug}/${w.et.slug}?date=2026-01-20` }) },
  'GET /v1/slots/{org_slug}/{team_slug}/{event_slug}': {
    expect: all(200),
    isPublic: true,
    req: (w) => ({ url: `/v1/slots/${w.orgA.slug}/${w.teamA}/${w.teamEt.slug}?date=2026-01-20` }),
  },
  'POST /v1/bookings': { expect: ownerRecord(201), req: (w) => ({ url: '/v1/bookings', payload: { event_type_id: w.et.id, ...guest(), start_time: w.nextSlot() } }) },
  'GET /v1/bookings': { expect: anyUser(200), req: () => ({ url: '/v1/bookings?limit=200' }) },
  'POST /v1/book/{username}/{event_slug}': PUBLIC_BOOKING((w) => `/v1/book/${w.owner.slug}/${w.et.slug}`),
  'POST /v1/assign/{username}/{event_slug}': PUBLIC_BOOKING((w) => `/v1/assign/${w.owner.slug}/${w.et.slug}`),
  'POST /book/{username}/{event_slug}': PUBLIC_BOOKING((w) => `/book/${w.owner.slug}/${w.et.slug}`),
  'POST /v1/book/{org_slug}/{team_slug}/{event_slug}': PUBLIC_BOOKING((w) => `/v1/book/${w.orgA.slug}/${w.teamA}/${w.teamEt.slug}`),
  'POST /v1/assign/{org_slug}/{team_slug}/{event_slug}': PUBLIC_BOOKING((w) => `/v1/assign/${w.orgA.slug}/${w.teamA}/${w.teamEt.slug}`),
  'DELETE /v1/bookings/{id}': { expect: ownerRecord(200), req: async (w) => ({ url: `/v1/bookings/${await freshBooking(w)}` }) },
  'POST /v1/bookings/{id}/reschedule': { expect: ownerRecord(200), req: (w) => ({ url: `/v1/bookings/${w.booking.id}/reschedule`, payload: { start_time: w.nextSlot() } }) },
  'GET /v1/bookings/{token}/confirm': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/bookings/${w.confirmToken(w.toConfirm)}/confirm` }) },
  'POST /v1/bookings/{token}/confirm': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/bookings/${w.confirmToken(w.toConfirm)}/confirm` }) },
  'GET /v1/bookings/{token}/decline': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/bookings/${w.confirmToken(w.toDecline)}/decline` }) },
  'POST /v1/bookings/{token}/decline': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/bookings/${w.confirmToken(w.toDecline)}/decline` }) },
  'GET /v1/bookings/manage/{token}': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/bookings/manage/${w.manageToken}` }) },
  'POST /v1/bookings/manage/{token}/cancel': {
    expect: all(200),
    isPublic: true,
    req: async (w) => ({ url: `/v1/bookings/manage/${w.manage(await freshBooking(w))}/cancel`, payload: {} }),
  },
  'POST /v1/bookings/manage/{token}/reschedule': {
    expect: all(200),
    isPublic: true,
    req: (w) => ({ url: `/v1/bookings/manage/${w.manageToken}/reschedule`, payload: { start_time: w.nextSlot() } }),
  },

  // The public pages' read endpoints (booking page, attendee's management page, dashboard configuration)
  'GET /v1/book/{username}/{event_slug}': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/book/${w.owner.slug}/${w.et.slug}` }) },
  'GET /v1/book/{org_slug}/{team_slug}/{event_slug}': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/book/${w.orgA.slug}/${w.teamA}/${w.teamEt.slug}` }) },
  'GET /v1/bookings/manage/{token}/event': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/bookings/manage/${w.manageToken}/event` }) },
  'GET /v1/bookings/manage/{token}/slots': { expect: all(200), isPublic: true, req: (w) => ({ url: `/v1/bookings/manage/${w.manageToken}/slots?date=2026-01-21` }) },
  'GET /v1/web/config': { expect: all(200), isPublic: true, req: () => ({ url: '/v1/web/config' }) },

  // Uploads
  'POST /v1/upload': { expect: anyUser(201), req: (w) => ({ url: '/v1/upload', raw: multipart(w.pngBytes) }) },

  // Tracker devices (#17): managed by their owner or an admin of their org; the tracker routes are
  // public and authenticate the device token themselves (each row posts with a fresh device's token).
  'POST /v1/devices': { expect: createInOrg(201), req: (w) => ({ url: '/v1/devices', payload: { name: neutral, org_id: w.orgA.id } }) },
  'GET /v1/devices': { expect: anyUser(200), req: () => ({ url: '/v1/devices' }) },
  'PATCH /v1/devices/{id}': { expect: orgRecord(200, 200, 404), req: async (w) => ({ url: `/v1/devices/${(await ownerDevice(w)).id}`, payload: { name: neutral } }) },
  'DELETE /v1/devices/{id}': { expect: orgRecord(200, 200, 404), req: async (w) => ({ url: `/v1/devices/${(await ownerDevice(w)).id}` }) },
  // Tracks (#38): the person, and admins and owners of the org; another member 403, another org 404.
  'GET /v1/devices/{id}/track': { expect: orgRecord(200, 200, 403), req: async (w) => ({ url: `/v1/devices/${(await ownerDevice(w)).id}/track` }) },
  'GET /v1/orgs/{org_slug}/reports/visits': { expect: orgRoute(200, 200, 403), req: (w) => ({ url: `${orgPath(w)}/reports/visits` }) },
  ...Object.fromEntries(
    ['GET', 'POST'].flatMap((m) =>
      ['/v1/trackers/osmand', '/v1/trackers/traccar', '/v1/trackers/gpslogger'].map((path): [string, Row] => [
        `${m} ${path}`,
        { expect: all(200), isPublic: true, req: async (w) => ({ url: `${path}?${path.endsWith('gpslogger') ? 'token' : 'id'}=${(await ownerDevice(w)).token}&lat=1&lon=2` }) },
      ]),
    ),
  ),
  'POST /v1/trackers/owntracks': {
    expect: all(200),
    isPublic: true,
    req: async (w) => ({ url: `/v1/trackers/owntracks?token=${(await ownerDevice(w)).token}`, payload: { _type: 'location', lat: 1, lon: 2, tst: Math.floor(w.t.clock.now().getTime() / 1000) } }),
  },
};

/** Routes served outside the OpenAPI document (HTML pages and files): each reached by its token. */
const UNDOCUMENTED = ['/docs', '/v1/openapi.json', '/incidents/status/:token', '/uploads/:key'];

interface OpenApi {
  paths: Record<string, Record<string, { security?: unknown[] }>>;
}

describe('access matrix generated from the OpenAPI document', () => {
  let t: TestApp;
  let w: Fixture;
  let actors: Actor[];
  let ops: { key: string; isPublic: boolean }[];
  let port: number;

  before(async () => {
    t = await buildTestApp();
    w = await buildFixture(t);
    const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json<OpenApi>();
    ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, isPublic: Array.isArray(op.security) && op.security.length === 0 })),
    );
    const cred = (u: Fixture['owner'] | Fixture['admin'], role: Role): Actor[] => [
      { name: `${role} (cookie)`, role, headers: { cookie: u.cookie }, user: u, via: 'cookie' },
      { name: `${role} (live key)`, role, headers: { authorization: `Bearer ${u.liveKey}` }, user: u, via: 'key' },
    ];
    actors = [
      ...cred(w.owner, 'owner'),
      ...cred(w.admin, 'admin'),
      ...cred(w.member, 'member'),
      ...cred(w.outsider, 'outsider'),
      { name: 'owner (test key)', role: 'otherMode', headers: { 'x-api-key': w.owner.testKey }, user: w.owner, via: 'key' },
      { name: 'anonymous', role: 'anonymous', headers: {}, via: 'none' },
    ];
    port = await listen(t);
  });
  after(() => t.close());

  test('every documented operation is classified, and every classified one is documented', () => {
    const documented = new Set(ops.map((o) => o.key));
    const unclassified = [...documented].filter((k) => !(k in ROWS));
    const stale = Object.keys(ROWS).filter((k) => !documented.has(k));
    assert.deepEqual(unclassified, [], 'operations without a row in the access table');
    assert.deepEqual(stale, [], 'rows for operations the document does not have');
    assert.ok(ops.length >= 80, `${ops.length} operations`);
  });

  test('the table marks as public exactly the operations the document marks public', () => {
    const wrong = ops.filter((o) => (ROWS[o.key]?.isPublic ?? false) !== o.isPublic).map((o) => o.key);
    assert.deepEqual(wrong, []);
    for (const o of ops) if (!o.isPublic) assert.equal(ROWS[o.key]?.expect.anonymous, 401, `${o.key}: anonymous`);
  });

  /** What the caller must never see in a 2xx answer of a non-public route. */
  function forbiddenMarkers(role: Role): string[] {
    const m = w.markers;
    if (role === 'outsider') return [m.orgA, m.liveA, m.testA];
    if (role === 'otherMode') return [m.liveA, m.orgB];
    return [m.orgB, m.testA];
  }

  /** The status of a stream opened as `a`, and its first event when it opened. */
  async function callStream(a: Actor, url: string): Promise<{ status: number; first?: StreamEvent }> {
    const client = await connectSse(port, url, a.headers);
    try {
      return { status: client.status, first: client.status === 200 ? eventOf(await client.waitFor((f) => f.data !== undefined)) : undefined };
    } finally {
      await client.close();
    }
  }

  async function cell(key: string, row: Row, a: Actor): Promise<void> {
    const [method, path] = key.split(' ') as [string, string];
    const label = `${key} as ${a.name}`;
    const req = await row.req(w, a);
    assert.ok(!req.url.includes('{'), `${label}: unfilled ${req.url} for ${path}`);
    const expected = row.expect[a.role];
    if (row.stream) {
      const { status, first } = await callStream(a, req.url);
      assert.equal(status, expected, `${label}: expected ${expected}, got ${status}`);
      if (status === 200) {
        const ev = first as StreamEvent & { org_ids: number[] };
        assert.equal(ev.type, 'connected', label);
        const inA = ['owner', 'admin', 'member', 'otherMode'].includes(a.role);
        assert.equal(ev.org_ids.includes(w.orgA.id), inA, `${label}: org A in the stream's orgs ${JSON.stringify(ev.org_ids)}`);
        assert.equal(ev.org_ids.includes(w.orgB.id), a.role === 'outsider', `${label}: org B in the stream's orgs`);
      }
      return;
    }
    const headers = { ...(req.headers ?? a.headers), ...(req.raw?.headers ?? {}) };
    const payload = req.raw ? req.raw.payload : req.payload !== undefined ? JSON.stringify(req.payload) : undefined;
    if (payload !== undefined && !req.raw) headers['content-type'] = 'application/json';
    const res = await t.app.inject({ method: method as 'GET', url: req.url, headers, ...(payload !== undefined ? { payload } : {}) });
    assert.equal(res.statusCode, expected, `${label}: expected ${expected}, got ${res.statusCode} ${res.body.slice(0, 300)}`);
    const code = REFUSAL_CODES[expected];
    if (code) assert.equal(res.json<{ code: string }>().code, expected === 403 && row.code403 ? row.code403 : code, `${label}: refusal code`);
    if (res.statusCode < 300) {
      if (!row.isPublic) for (const m of forbiddenMarkers(a.role)) assert.ok(!res.body.includes(m), `${label}: the answer shows ${m}...: ${res.body.slice(0, 400)}`);
      await row.then?.(res, a, w);
    }
  }

  describe('each operation, each caller', () => {
    for (const [key, row] of Object.entries(ROWS)) {
      test(key, async () => {
        const failures: string[] = [];
        for (const a of actors) {
          try {
            await cell(key, row, a);
          } catch (err) {
            failures.push(err instanceof Error ? err.message : String(err));
          }
        }
        if (failures.length > 0) assert.fail(`${failures.length} cell(s) disagree:\n${failures.join('\n')}`);
      });
    }
  });

  test("test-mode records answer 404 to the same owner's live credentials, on every route that names them", async () => {
    const tk = { 'x-api-key': w.owner.testKey };
    const inc = await w.ok<{ Id: number }>(tk, 'POST', '/v1/tickets', { title: 'test-mode incident', org_id: w.orgA.id });
    const et = await w.ok<{ id: number }>(tk, 'POST', '/v1/event-types', eventTypeBody('Test Mode Call'));
    const bk = await w.ok<{ id: string }>(tk, 'POST', '/v1/bookings', { event_type_id: et.id, ...guest(), start_time: w.nextSlot() });
    const cal = await w.ok<{ id: number }>(tk, 'POST', '/v1/calendars', { kind: 'ics', url: 'http://127.0.0.1:9/test-mode.ics', name: 'test-mode calendar' });
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/calendars/${cal.id}`],
      ['PATCH', `/v1/calendars/${cal.id}`, { name: 'x' }],
      ['POST', `/v1/calendars/${cal.id}/sync`],
      ['DELETE', `/v1/calendars/${cal.id}`],
      ['GET', `/v1/tickets/${inc.Id}`],
      ['PATCH', `/v1/incidents/${inc.Id}`, { status: 'closed' }],
      ['GET', `/v1/tickets/${inc.Id}/replies`],
      ['GET', `/v1/incidents/${inc.Id}/timeline`],
      ['GET', `/v1/tickets/${inc.Id}/responders`],
      ['POST', `/v1/tickets/${inc.Id}/acknowledge`],
      ['POST', `/v1/incidents/${inc.Id}/progress`, { state: 'on_scene' }],
      ['POST', `/v1/incidents/${inc.Id}/replies`, { body: 'x' }],
      ['DELETE', `/v1/tickets/${inc.Id}`],
      ['GET', `/v1/event-types/${et.id}`],
      ['PATCH', `/v1/event-types/${et.id}`, { name: 'x' }],
      ['DELETE', `/v1/event-types/${et.id}`],
      ['GET', `/v1/availability?event_type_id=${et.id}&date=2026-01-20`],
      ['POST', '/v1/bookings', { event_type_id: et.id, ...guest(), start_time: w.nextSlot() }],
      ['POST', `/v1/bookings/${bk.id}/reschedule`, { start_time: w.nextSlot() }],
      ['DELETE', `/v1/bookings/${bk.id}`],
    ];
    const failures: string[] = [];
    for (const headers of [{ cookie: w.owner.cookie }, { 'x-api-key': w.owner.liveKey }] as Headers[])
      for (const [method, url, payload] of calls) {
        const res = await w.call(headers, method, url, payload);
        if (res.statusCode !== 404 || res.json<{ code: string }>().code !== 'not_found') failures.push(`${method} ${url} via ${Object.keys(headers)[0]}: ${res.statusCode} ${res.body.slice(0, 120)}`);
      }
    assert.deepEqual(failures, []);
    // A push subscription of the test key: removing its endpoint with live credentials leaves it.
    const endpoint = `https://push.example.com/${w.markers.testA}-matrix-endpoint`;
    await w.ok(tk, 'POST', '/v1/push/subscriptions', { endpoint, keys: browserKeys().json });
    for (const headers of [{ cookie: w.owner.cookie }, { 'x-api-key': w.owner.liveKey }] as Headers[]) assert.equal((await w.call(headers, 'DELETE', '/v1/push/subscriptions', { endpoint })).statusCode, 200);
    assert.deepEqual(await w.t.ctx.db.selectFrom('push_subscriptions').select('livemode').where('endpoint', '=', endpoint).execute(), [{ livemode: 0 }]);
    // The test key still reaches them all.
    assert.equal((await w.call(tk, 'GET', `/v1/calendars/${cal.id}`)).statusCode, 200);
    assert.equal((await w.call(tk, 'GET', `/v1/tickets/${inc.Id}`)).statusCode, 200);
    assert.equal((await w.call(tk, 'DELETE', `/v1/bookings/${bk.id}`)).statusCode, 200);
  });

  describe('outside the document', () => {
    test('the routes outside the OpenAPI document are the known pages, each behind a token or public', async () => {
      for (const r of UNDOCUMENTED) assert.ok(t.app.hasRoute({ method: 'GET', url: r }), `${r} exists`);
      const status = await t.app.inject({ url: `/incidents/status/${w.incident.customer_token}` });
      assert.equal(status.statusCode, 200);
      assert.match(String(status.headers['content-type']), /text\/html/);
      const wrong = await t.app.inject({ url: '/incidents/status/not-a-token' });
      // An HTML page answers its 404 as a page too.
      assert.equal(wrong.statusCode, 404);
      assert.match(String(wrong.headers['content-type']), /text\/html/);
      assert.ok(!wrong.body.includes(w.markers.liveA));
      const feed = (await w.ok<{ url: string }>({ cookie: w.owner.cookie }, 'GET', '/v1/calendar')).url;
      const ics = await t.app.inject({ url: new URL(feed).pathname });
      assert.equal(ics.statusCode, 200);
      assert.ok(!ics.body.includes(w.markers.orgB), 'the feed shows only the owner');
      const forged = await t.app.inject({ url: '/calendar/forged.ics' });
      assert.equal(forged.statusCode, 404);
      assert.equal((await t.app.inject({ url: '/uploads/nothing-here.png' })).statusCode, 404);
    });
  });
});
