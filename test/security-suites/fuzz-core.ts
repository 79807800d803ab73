// Schema-driven fuzzing of every documented operation through `inject`: path parameters, query
// strings and bodies are drawn from the operation's own schemas in the OpenAPI document, valid and
// invalid mixed, with the owner's credentials (cookie, key, Bearer in turn) so requests reach the
// handlers. Property: never a 5xx, and a 4xx always has a JSON body with a string `error`.
// Mutating operations (PATCH, DELETE, cancel, reschedule, decisions) draw their real ids from
// disposable records, so one operation's successes never starve the others of fixtures.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc, { type Arbitrary } from 'fast-check';
import { buildTestApp, type TestApp, type Headers } from '../helpers.js';
import { register } from '../factories.js';
import { buildFixture, eventTypeBody, multipart, type Fixture } from './fixture.js';
import { junk, mixed, type Hints, type Schema } from './schema-arbitrary.js';

export const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
export const RUNS = Number(process.env.FUZZ_RUNS ?? 100);

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Schema;
}
export interface Operation {
  key: string;
  method: string;
  path: string;
  parameters: Parameter[];
  body?: Schema;
  multipart: boolean;
}
interface OpenApi {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }>>;
}

/** Server-Sent Events never end under `inject`; they are covered by the access matrix and the stream tests. */
const STREAMS = new Set(['GET /v1/tickets/stream', 'GET /v1/incidents/stream', 'GET /v1/signals/stream']);

export function operationsOf(doc: OpenApi): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([m, op]) => {
      const content = op.requestBody?.content ?? {};
      return {
        key: `${m.toUpperCase()} ${path}`,
        method: m.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: content['application/json']?.schema,
        multipart: 'multipart/form-data' in content,
      };
    }),
  );
}

/** Records the mutating operations may consume. */
interface Disposable {
  users: number[];
  org: string;
  orgs: string[];
  team: string;
  teams: string[];
  keys: number[];
  incidents: number[];
  eventTypes: number[];
  bookings: string[];
  pending: string[];
  integrations: { id: number; key: string }[];
  /** Org A's on-call schedule (reads and edits), schedules to delete, overrides of it to delete, its feed's token. */
  schedule: number;
  schedules: number[];
  overrides: number[];
  scheduleFeed: string;
  /** Escalation policies of org A (reads, edits and deletes). */
  policies: number[];
  /** Incident subscriptions of org A (reads, edits, deletes, "send test": their URL a loopback literal, refused at once). */
  subscriptions: number[];
  /** Heartbeat integrations of org A (their ping URLs) and its maintenance windows (edits and deletes). */
  heartbeats: { id: number; key: string }[];
  windows: number[];
  /** Sites of org A (reads, edits, deletes) and tracker devices of its owner (their tracks). */
  sites: number[];
  devices: number[];
}

async function disposables(w: Fixture): Promise<Disposable> {
  const oc = { cookie: w.owner.cookie };
  const lk = { 'x-api-key': w.owner.liveKey };
  const n = 6;
  const range = Array.from({ length: n }, (_, i) => i);
  const users: number[] = [];
  for (const _ of range.slice(0, 4)) users.push((await register(w.t.app, { name: 'Spare User' })).id);
  const org = (await w.ok<{ slug: string }>(oc, 'POST', '/v1/orgs', { name: 'Fuzz Spare Org' })).slug;
  const team = (await w.ok<{ slug: string }>(oc, 'POST', `/v1/orgs/${org}/teams`, { name: 'Fuzz Spare Team' })).slug;
  const emails = (await w.ok<{ users: { id: number; email: string }[] }>({ cookie: w.root.cookie }, 'GET', '/v1/users?limit=200')).users;
  for (const id of users) {
    await w.ok(oc, 'POST', `/v1/orgs/${org}/members`, { email: emails.find((u) => u.id === id)!.email, role: 'member' });
    await w.ok(oc, 'POST', `/v1/orgs/${org}/teams/${team}/members`, { user_id: id });
  }
  const rota = { time_zone: 'Europe/London', layers: [{ start: '2026-01-05T09:00', turn: { unit: 'day', length: 1 }, users: [w.owner.id, w.member.id] }] };
  const schedulesUrl = `/v1/orgs/${w.orgA.slug}/schedules`;
  const schedule = (await w.ok<{ id: number }>(lk, 'POST', schedulesUrl, { name: 'Fuzz Rota', ...rota })).id;
  const scheduleFeed = new URL((await w.ok<{ url: string }>(lk, 'GET', `${schedulesUrl}/${schedule}/feed`)).url).pathname.split('/').pop()!;
  const d: Disposable = { users, org, orgs: [], team, teams: [], keys: [], incidents: [], eventTypes: [], bookings: [], pending: [], integrations: [], schedule, schedules: [], overrides: [], scheduleFeed, policies: [], subscriptions: [], heartbeats: [], windows: [], sites: [], devices: [] };
  for (const i of range) {
    d.orgs.push((await w.ok<{ slug: string }>(oc, 'POST', '/v1/orgs', { name: `Fuzz Org ${i}` })).slug);
    d.teams.push((await w.ok<{ slug: string }>(oc, 'POST', `/v1/orgs/${org}/teams`, { name: `Fuzz Team ${i}` })).slug);
    d.keys.push((await w.ok<{ id: number }>(oc, 'POST', '/v1/api-keys', { name: `spare ${i}`, mode: 'live' })).id);
    d.incidents.push((await w.ok<{ Id: number }>(lk, 'POST', '/v1/tickets', { title: `spare ${i}`, org_id: w.orgA.id })).Id);
    d.eventTypes.push((await w.ok<{ id: number }>(lk, 'POST', '/v1/event-types', eventTypeBody(`Spare ${i}`))).id);
    const guest = { attendee_name: 'Spare Guest', attendee_email: `spare${i}@example.com` };
    d.bookings.push((await w.ok<{ id: string }>(lk, 'POST', '/v1/bookings', { event_type_id: w.et.id, ...guest, start_time: w.nextSlot() })).id);
    d.pending.push((await w.ok<{ id: string }>(lk, 'POST', '/v1/bookings', { event_type_id: w.pendingEt.id, ...guest, start_time: w.nextSlot() })).id);
    d.integrations.push(await w.ok<{ id: number; key: string }>(lk, 'POST', '/v1/integrations', { name: `Spare ${i}`, org_id: w.orgA.id }));
    d.schedules.push((await w.ok<{ id: number }>(lk, 'POST', schedulesUrl, { name: `Spare Rota ${i}`, ...rota })).id);
    const start = w.t.clock.nowMs() + (i + 1) * 86_400_000;
    const override = { user_id: w.member.id, start: new Date(start).toISOString(), end: new Date(start + 3_600_000).toISOString() };
    d.overrides.push((await w.ok<{ id: number }>(lk, 'POST', `${schedulesUrl}/${schedule}/overrides`, override)).id);
    const policy = { name: `Fuzz Policy ${i}`, levels: [{ delay_minutes: 5, targets: [{ type: 'user', id: w.member.id }] }] };
    d.policies.push((await w.ok<{ id: number }>(lk, 'POST', `/v1/orgs/${w.orgA.slug}/escalation-policies`, policy)).id);
    const sub = await w.ok<{ id: number }>(lk, 'POST', `/v1/orgs/${w.orgA.slug}/webhooks`, { url: 'https://hooks.example.com/fuzz', events: ['incident.created'], format: 'standard' });
    await w.t.ctx.db.updateTable('incident_subscriptions').set({ url: 'https://127.0.0.1:9/fuzz' }).where('id', '=', sub.id).execute();
    d.subscriptions.push(sub.id);
    d.heartbeats.push(await w.ok<{ id: number; key: string }>(lk, 'POST', '/v1/integrations', { name: `Spare beat ${i}`, org_id: w.orgA.id, type: 'heartbeat', interval_seconds: 300 }));
    const window = { start: new Date(start).toISOString(), end: new Date(start + 3_600_000).toISOString() };
    d.windows.push((await w.ok<{ id: number }>(lk, 'POST', `/v1/orgs/${w.orgA.slug}/maintenance-windows`, window)).id);
    d.sites.push((await w.ok<{ id: number }>(lk, 'POST', `/v1/orgs/${w.orgA.slug}/sites`, { name: `Fuzz Site ${i}`, lat: 51.5 + i / 100, lng: -0.1, radius_m: 200 })).id);
    d.devices.push((await w.ok<{ id: number }>(lk, 'POST', '/v1/devices', { name: `Fuzz Van ${i}` })).id);
  }
  return d;
}

type ParamSet = Record<string, string | number>;

/** Existing values for an operation's path parameters: the world's for reads, disposable ones for changes. */
function realParams(op: Operation, w: Fixture, d: Disposable): ParamSet[] {
  const p = op.path;
  const mutating = op.method === 'PATCH' || op.method === 'DELETE' || /\/(cancel|reschedule|confirm|decline)$/.test(p);
  const each = <T>(xs: T[], f: (x: T) => ParamSet) => xs.map(f);
  if (p === '/v1/users/{id}') return each(d.users, (id) => ({ id }));
  if (p === '/v1/u/{slug}') return [{ slug: w.owner.slug }, { slug: w.member.slug }];
  if (p === '/v1/api-keys/{id}') return each(d.keys, (id) => ({ id }));
  if (p === '/v1/orgs/{org_slug}') return mutating ? each(d.orgs, (org_slug) => ({ org_slug })) : [{ org_slug: w.orgA.slug }];
  if (p.startsWith('/v1/orgs/{org_slug}/members')) return mutating ? each(d.users, (user_id) => ({ org_slug: d.org, user_id })) : [{ org_slug: w.orgA.slug }];
  if (p === '/v1/orgs/{org_slug}/teams' || p === '/v1/orgs/{org_slug}/dispatch') return [{ org_slug: w.orgA.slug }];
  if (p === '/v1/orgs/{org_slug}/teams/{team_slug}') return each(d.teams, (team_slug) => ({ org_slug: d.org, team_slug }));
  if (p === '/v1/orgs/{org_slug}/teams/{team_slug}/event-types') return [{ org_slug: w.orgA.slug, team_slug: w.teamA }];
  if (p.startsWith('/v1/orgs/{org_slug}/teams/{team_slug}/members')) return mutating ? each(d.users, (user_id) => ({ org_slug: d.org, team_slug: d.team, user_id })) : [{ org_slug: w.orgA.slug, team_slug: w.teamA }];
  if (/^\/v1\/(tickets|incidents)\/\{id\}$/.test(p)) return op.method === 'DELETE' ? each(d.incidents, (id) => ({ id })) : [{ id: w.incident.Id }];
  if (/^\/v1\/(tickets|incidents)\/\{id\}\/(replies|timeline|responders|acknowledge|progress)$/.test(p)) return [{ id: w.incident.Id }];
  // Paging by hand: the spare incidents (the world's may be resolved by then: 409).
  if (/^\/v1\/(tickets|incidents)\/\{id\}\/page$/.test(p)) return each(d.incidents, (id) => ({ id }));
  if (p === '/v1/orgs/{org_slug}/escalation-policies') return [{ org_slug: w.orgA.slug }];
  if (p === '/v1/orgs/{org_slug}/escalation-policies/{id}') return each(d.policies, (id) => ({ org_slug: w.orgA.slug, id }));
  if (p === '/v1/orgs/{org_slug}/webhooks') return [{ org_slug: w.orgA.slug }];
  if (p.startsWith('/v1/orgs/{org_slug}/webhooks/{id}')) return each(d.subscriptions, (id) => ({ org_slug: w.orgA.slug, id }));
  if (/\/status\/\{token\}$/.test(p)) return [{ token: w.incident.customer_token }];
  if (p === '/v1/event-types/{id}') return mutating ? each(d.eventTypes, (id) => ({ id })) : [{ id: w.et.id }, { id: w.teamEt.id }];
  if (p === '/v1/deliveries/{id}/retry') return [{ id: w.deliveryId }];
  if (p.endsWith('/{username}/{event_slug}')) return [{ username: w.owner.slug, event_slug: w.et.slug }, { username: w.owner.slug, event_slug: w.pendingEt.slug }];
  if (p.endsWith('/{org_slug}/{team_slug}/{event_slug}')) return [{ org_slug: w.orgA.slug, team_slug: w.teamA, event_slug: w.teamEt.slug }];
  if (p.startsWith('/v1/bookings/{id}')) return each(d.bookings, (id) => ({ id }));
  if (/^\/v1\/bookings\/\{token\}\/(confirm|decline)$/.test(p)) return each(d.pending, (id) => ({ token: w.confirmToken(id) }));
  if (p === '/v1/bookings/manage/{token}') return [{ token: w.manageToken }];
  if (p.startsWith('/v1/bookings/manage/{token}/')) return each(d.bookings, (id) => ({ token: w.manage(id) }));
  if (p === '/v1/orgs/{org_slug}/schedules' || p === '/v1/orgs/{org_slug}/on-call') return [{ org_slug: w.orgA.slug }];
  if (p === '/v1/orgs/{org_slug}/schedules/{schedule}' && op.method === 'DELETE') return each(d.schedules, (schedule) => ({ org_slug: w.orgA.slug, schedule }));
  if (p.endsWith('/overrides/{id}')) return each(d.overrides, (id) => ({ org_slug: w.orgA.slug, schedule: d.schedule, id }));
  if (p.startsWith('/v1/orgs/{org_slug}/schedules/{schedule}')) return [{ org_slug: w.orgA.slug, schedule: d.schedule }];
  if (p === '/calendar/schedules/{token}') return [{ token: d.scheduleFeed }];
  if (p === '/v1/integrations/{id}' || p === '/v1/integrations/{id}/events') return each(d.integrations, ({ id }) => ({ id }));
  if (p === '/v1/integrations/{key}/heartbeat') return each(d.heartbeats, ({ key }) => ({ key }));
  if (p === '/v1/orgs/{org_slug}/maintenance-windows') return [{ org_slug: w.orgA.slug }];
  if (p === '/v1/orgs/{org_slug}/maintenance-windows/{id}') return each(d.windows, (id) => ({ org_slug: w.orgA.slug, id }));
  if (p === '/v1/orgs/{org_slug}/sites' || p.startsWith('/v1/orgs/{org_slug}/reports/')) return [{ org_slug: w.orgA.slug }];
  if (p === '/v1/orgs/{org_slug}/sites/{id}') return each(d.sites, (id) => ({ org_slug: w.orgA.slug, id }));
  if (p === '/v1/devices/{id}/track') return each(d.devices, (id) => ({ id }));
  if (p.startsWith('/v1/integrations/{key}/')) return each(d.integrations, ({ key }) => ({ key }));
  return [{}];
}

/** Body and query fields that name records of this world. */
function hintsOf(w: Fixture, d: Disposable): Hints {
  const someDate = fc.date({ min: new Date('2026-01-01T00:00:00Z'), max: new Date('2026-03-31T00:00:00Z'), noInvalidDate: true });
  return {
    event_type_id: fc.oneof(fc.constantFrom(w.et.id, w.pendingEt.id, w.teamEt.id), fc.integer({ min: 1, max: 2 ** 31 - 1 })),
    // Fresh slots book for real; others are mostly unavailable (409) or invalid.
    start_time: fc.oneof(
      fc.constant(null).map(() => w.nextSlot()),
      someDate.map((x) => x.toISOString()),
    ),
    org_id: fc.oneof(fc.constantFrom(w.orgA.id, w.orgB.id), fc.integer({ min: 1, max: 2 ** 31 - 1 })),
    ticket_id: fc.oneof(fc.constant(w.incident.Id), fc.integer({ min: 1, max: 2 ** 31 - 1 })),
    user_id: fc.oneof(fc.constantFrom(w.member.id, w.admin.id, ...d.users), fc.integer({ min: 1, max: 2 ** 31 - 1 })),
    assignee_id: fc.oneof(fc.constantFrom(w.member.id, w.owner.id, w.outsider.id), fc.integer({ min: 1, max: 2 ** 31 - 1 })),
    recorded_at: fc.date({ min: new Date('2025-12-01T00:00:00Z'), max: new Date('2026-01-05T11:00:00Z'), noInvalidDate: true }).map((x) => x.toISOString()),
    date: someDate.map((x) => x.toISOString().slice(0, 10)),
    from: someDate.map((x) => x.toISOString()),
    to: someDate.map((x) => x.toISOString()),
    // The admin routes may change plans: keep the fixture users' plans as they are.
    plan: fc.constantFrom('free', 'starter', 'agency', 'enterprise'),
    // Paging: a policy's levels (their items are components the arbitrary does not follow) and the
    // people and schedule paged by hand, mostly of org A.
    levels: fc.oneof(
      fc.constant([{ delay_minutes: 5, targets: [{ type: 'user', id: w.member.id }] }]),
      fc.constant([{ delay_minutes: 1, targets: [{ type: 'schedule', id: d.schedule }] }, { delay_minutes: 1440, targets: [{ type: 'user', id: w.admin.id }] }]),
      fc.constant([{ delay_minutes: 5, targets: [{ type: 'team', id: 2 ** 31 - 1 }] }]),
    ),
    user_ids: fc.oneof(fc.constant([w.member.id]), fc.constant([w.admin.id, w.member.id]), fc.array(fc.integer({ min: 1, max: 2 ** 31 - 1 }), { maxLength: 3 })),
    schedule_id: fc.oneof(fc.constant(d.schedule), fc.integer({ min: 1, max: 2 ** 31 - 1 })),
    // A maintenance window's bounds: mostly near the world's clock (an end after its start, within 31 days, half the time).
    start: someDate.map((x) => x.toISOString()),
    end: someDate.map((x) => x.toISOString()),
    integration_ids: fc.oneof(fc.constant(null), fc.constant([d.integrations[0]!.id]), fc.array(fc.integer({ min: 1, max: 2 ** 31 - 1 }), { maxLength: 2 })),
    // A place (sites, incidents): mostly valid coordinates and radii.
    lat: fc.oneof(fc.double({ min: -90, max: 90, noNaN: true }), fc.double({ noNaN: true })),
    lng: fc.oneof(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ noNaN: true })),
    radius_m: fc.oneof(fc.integer({ min: 10, max: 50_000 }), fc.integer()),
    // The Events API's credential: mostly a live integration's key.
    routing_key: fc.oneof(fc.constantFrom(...d.integrations.map((i) => i.key)), fc.string({ maxLength: 40 })),
  };
}

const MALFORMED_JSON = ['{', '{"a":', '[1,', 'nul', '{"title": "x",}', '\u0000', '{"a":"\\ud800"}', '1e999', '"text"', '[]', 'null', '0', '{"__proto__":{"polluted":1}}'];

interface Drawn {
  params: ParamSet;
  query: Record<string, unknown>;
  body: { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; type: string } | { kind: 'none' } | { kind: 'multipart'; payload: Buffer; headers: Headers };
  cred: 'cookie' | 'key' | 'bearer' | 'none';
  idempotencyKey: string | null;
  accept: string | null;
}

function encodeSegment(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v) ?? 'undefined';
  try {
    return encodeURIComponent(s);
  } catch {
    return 'lone-surrogate';
  }
}

function queryString(q: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) {
    const values = Array.isArray(v) ? v : [v];
    for (const x of values) parts.push(`${encodeSegment(k)}=${encodeSegment(typeof x === 'string' ? x : JSON.stringify(x) ?? '')}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

function uploadBodies(w: Fixture): Arbitrary<Drawn['body']> {
  const mp = (bytes: Buffer, name?: string, type?: string, field?: string) => ({ kind: 'multipart' as const, ...multipart(bytes, name, type, field) });
  return fc.oneof(
    fc.constant(mp(w.pngBytes)),
    fc.uint8Array({ maxLength: 2000 }).map((b) => mp(Buffer.from(b))),
    fc.uint8Array({ maxLength: 200 }).map((b) => mp(Buffer.concat([w.pngBytes.subarray(0, 16), Buffer.from(b)]))),
    fc.uint8Array({ maxLength: 200 }).map((b) => mp(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from(b)]), 'a.jpg', 'image/jpeg')),
    fc.constant(mp(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'a.svg', 'image/svg+xml')),
    fc.constant(mp(w.pngBytes, 'a.png', 'image/png', 'other')),
    fc.string({ maxLength: 200 }).map((s) => ({ kind: 'raw' as const, text: s, type: 'multipart/form-data; boundary=zzz' })),
    fc.string({ maxLength: 50 }).map((s) => ({ kind: 'raw' as const, text: s, type: 'multipart/form-data' })),
    fc.constant({ kind: 'json' as const, value: { file: 'x' } }),
    fc.constant({ kind: 'none' as const }),
  );
}

function drawFor(op: Operation, w: Fixture, d: Disposable, hints: Hints): Arbitrary<Drawn> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const sets = realParams(op, w, d);
  const params: Arbitrary<ParamSet> = fc.tuple(fc.constantFrom(...sets), ...pathParams.map((p) => fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: mixed(p.schema, p.name, {}) }, { weight: 1, arbitrary: junk }))).map(([set, ...subs]) => {
    const out: ParamSet = { ...set };
    pathParams.forEach((p, i) => {
      if (subs[i] !== undefined) out[p.name] = subs[i] as string;
    });
    return out;
  });
  const querySchema: Schema = {
    type: 'object',
    properties: Object.fromEntries(queryParams.map((p) => [p.name, p.schema])),
    required: queryParams.filter((p) => p.required && (p.schema as { default?: unknown }).default === undefined).map((p) => p.name),
  };
  const query = queryParams.length ? (mixed(querySchema, '', hints) as Arbitrary<Record<string, unknown>>).map((q) => (q && typeof q === 'object' && !Array.isArray(q) ? q : { q })) : fc.constant({});
  let body: Arbitrary<Drawn['body']>;
  if (op.multipart) body = uploadBodies(w);
  else if (op.body)
    body = fc.oneof(
      { weight: 8, arbitrary: mixed(op.body, '', hints).map((value) => ({ kind: 'json' as const, value })) },
      { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_JSON).map((text) => ({ kind: 'raw' as const, text, type: 'application/json' })) },
      { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/xml').map((type) => ({ kind: 'raw' as const, text: 'a=1', type })) },
      { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
    );
  else body = fc.oneof({ weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: 'json' as const, value })) });
  // Logout with the owner's cookie would end the session every other call uses.
  const creds = op.key === 'POST /v1/auth/logout' ? (['key', 'bearer', 'none'] as const) : (['cookie', 'key', 'bearer', 'none'] as const);
  const cred = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...creds.filter((c) => c !== 'none')) }, { weight: 1, arbitrary: fc.constant('none' as const) });
  // Idempotency keys: mostly none or fresh, sometimes odd, sometimes one key reused with other bodies (422/409 by design).
  let fresh = 0;
  const idem =
    op.method === 'POST'
      ? fc.oneof(
          { weight: 4, arbitrary: fc.constant(null) },
          { weight: 3, arbitrary: fc.constant(null).map(() => `fuzz-${op.path.length}-${(fresh += 1)}`) },
          { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 300 }), fc.constant(''), fc.constant('fuzz-repeated-key')) },
        )
      : fc.constant(null);
  const accept = fc.constantFrom(null, 'application/json', 'text/html,application/xhtml+xml', '*/*', 'application/json;q=0.1, */*');
  return fc.record({ params, query, body, cred, idempotencyKey: idem, accept });
}

/** Routes a monitoring tool calls with the integration key as its bearer token. */
const TOOL_ROUTES = /^POST \/v1\/integrations\/(alertmanager|grafana)$/;
let toolKey = '';

async function send(t: TestApp, w: Fixture, op: Operation, x: Drawn) {
  const url = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeSegment(x.params[name] ?? '')) + queryString(x.query);
  // The admin routes act as the instance admin, so they reach their handlers too.
  const who = op.path.startsWith('/v1/users') && op.path !== '/v1/users' ? w.root : op.key === 'GET /v1/users' ? w.root : w.owner;
  const liveKey = who === w.root ? (w as Fixture & { rootKey: string }).rootKey : w.owner.liveKey;
  const headers: Headers = {};
  if (x.cred === 'cookie') headers.cookie = who.cookie;
  if (x.cred === 'key') headers['x-api-key'] = liveKey;
  if (x.cred === 'bearer') headers.authorization = `Bearer ${TOOL_ROUTES.test(op.key) ? toolKey : liveKey}`;
  if (x.idempotencyKey !== null) headers['idempotency-key'] = x.idempotencyKey;
  if (x.accept !== null) headers.accept = x.accept;
  let payload: string | Buffer | undefined;
  if (x.body.kind === 'json') {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(x.body.value) ?? 'null';
  } else if (x.body.kind === 'raw') {
    headers['content-type'] = x.body.type;
    payload = x.body.text;
  } else if (x.body.kind === 'multipart') {
    Object.assign(headers, x.body.headers);
    payload = x.body.payload;
  }
  return { url, res: await t.app.inject({ method: op.method as 'GET', url, headers, ...(payload !== undefined ? { payload } : {}) }) };
}

/**
 * Confirm and decline links are opened by browsers from an email: they answer pages, also for a bad
 * link, unless the client asks for JSON (docs/api.md, "Bookings").
 */
const PAGE_ROUTES = /^(GET|POST) \/v1\/bookings\/\{token\}\/(confirm|decline)$/;

/** The contract every answer keeps. */
export function assertContract(op: string, url: string, status: number, contentType: unknown, text: string, accept: string | null = null): void {
  assert.ok(status < 500, `${op} ${url}: ${status} ${text.slice(0, 300)}`);
  // (A path the router refuses before the route, such as an over-long token, is JSON there too.)
  if (status >= 400 && PAGE_ROUTES.test(op) && !(accept ?? '').includes('application/json') && /text\/html/.test(String(contentType))) {
    assert.match(text, /^<!doctype html>/i, `${op} ${url}: ${status} a browser gets a page`);
    return;
  }
  if (status >= 400) {
    assert.match(String(contentType), /application\/json/, `${op} ${url}: ${status} error without a JSON body: ${text.slice(0, 200)}`);
    const parsed = JSON.parse(text) as { error?: unknown };
    assert.equal(typeof parsed.error, 'string', `${op} ${url}: ${status} error body without a string error: ${text.slice(0, 200)}`);
  }
}

/** Declares the fuzz tests of the operations `pick` selects. */
export function fuzzSuite(title: string, pick: (op: Operation, index: number) => boolean): void {
  describe(title, () => {
    let t: TestApp;
    let w: Fixture & { rootKey: string };
    let d: Disposable;
    let hints: Hints;
    let ops: Operation[];

    before(async () => {
      console.log(`fuzz seed ${SEED} (FUZZ_SEED to change), ${RUNS} runs per operation`);
      t = await buildTestApp();
      const world = await buildFixture(t);
      const rootKey = (await world.ok<{ key: string }>({ cookie: world.root.cookie }, 'POST', '/v1/api-keys', { name: 'root', mode: 'live' })).key;
      w = { ...world, rootKey };
      d = await disposables(w);
      toolKey = d.integrations[0]!.key;
      hints = hintsOf(w, d);
      const doc = (await t.app.inject({ url: '/v1/openapi.json' })).json<OpenApi>();
      ops = operationsOf(doc);
      assert.ok(ops.length >= 80);
    });
    after(() => t.close());

    test('regression: U+0000 in a path, a query or a body is a 422, not a 500 from PostgreSQL', async () => {
      const h = { 'x-api-key': w.owner.liveKey };
      const cases: [string, string, unknown?][] = [
        ['GET', '/v1/orgs/%00'],
        ['GET', '/v1/u/a%00b'],
        ['GET', `/v1/slots/${w.owner.slug}/x%00?date=2026-01-20`],
        ['GET', `/v1/availability?event_type_id=${w.et.id}&date=2026-01-20&timezone=%00`],
        ['POST', '/v1/tickets', { title: 'nul \u0000 title', org_id: w.orgA.id }],
        ['POST', '/v1/signals', { type: 'note', note: 'x', meta: { 'k\u0000': 1 } }],
      ];
      for (const [method, url, payload] of cases) {
        const res = await w.call(h, method, url, payload);
        assert.equal(res.statusCode, 422, `${method} ${url}: ${res.statusCode} ${res.body}`);
        assert.equal(res.json<{ code: string }>().code, 'validation_failed');
      }
    });

    test('regression: an id beyond a 32-bit integer is a 422, not a 500 from PostgreSQL', async () => {
      const h = { 'x-api-key': w.owner.liveKey };
      const cases: [string, string, unknown?][] = [
        ['GET', '/v1/event-types/6197219374952215'],
        ['DELETE', '/v1/api-keys/1e300'],
        ['POST', '/v1/tickets', { title: 'big org', org_id: 1e308 }],
        ['GET', '/v1/tickets?org_id=4294967296'],
      ];
      for (const [method, url, payload] of cases) {
        const res = await w.call(h, method, url, payload);
        assert.equal(res.statusCode, 422, `${method} ${url}: ${res.statusCode} ${res.body}`);
      }
    });

    test('regression: every JSON body nested 7,000 deep, and every path parameter 5,000 long, keeps the contract', async () => {
      const h = { 'x-api-key': w.owner.liveKey, 'content-type': 'application/json' };
      const deep = `{"a":${'['.repeat(7000)}${']'.repeat(7000)}}`;
      const long = 'p'.repeat(5000);
      let checked = 0;
      for (const op of ops.filter((o) => !STREAMS.has(o.key) && pick(o, 0))) {
        const filled = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeSegment(realParams(op, w, d)[0]?.[name] ?? '1'));
        if (op.body) {
          const res = await t.app.inject({ method: op.method as 'POST', url: filled, headers: h, payload: deep });
          assertContract(op.key, filled, res.statusCode, res.headers['content-type'], res.body, 'application/json');
          // The PagerDuty Events API answers its own 400 "invalid event" body (docs/integrations.md).
          const refusals = /\/events$|^POST \/v2\/enqueue$/.test(op.key) ? [400, 401, 404] : [401, 404, 422];
          assert.ok(refusals.includes(res.statusCode), `${op.key} deep body: ${res.statusCode} ${res.body.slice(0, 200)}`);
          checked += 1;
        }
        if (op.path.includes('{')) {
          const url = op.path.replace(/\{(\w+)\}/g, long);
          const res = await t.app.inject({ method: op.method as 'GET', url, headers: { 'x-api-key': w.owner.liveKey, accept: 'application/json' } });
          assertContract(op.key, url.slice(0, 60), res.statusCode, res.headers['content-type'], res.body, 'application/json');
          assert.equal(res.statusCode, 404, `${op.key} long parameter: ${res.body.slice(0, 200)}`);
          assert.ok(!res.body.includes(long.slice(0, 100)), `${op.key}: the answer echoes the path`);
          checked += 1;
        }
      }
      assert.ok(checked >= 40, `only ${checked} checks`);
    });

    test('every operation of the document, valid and invalid inputs: no 5xx, JSON errors', async () => {
      const chosen = ops.filter((op, i) => !STREAMS.has(op.key) && pick(op, i));
      // Mutating operations run after the reads, and deleting an org last of all.
      const rank = (op: Operation) => (op.key === 'DELETE /v1/orgs/{org_slug}' ? 2 : op.method === 'DELETE' ? 1 : 0);
      chosen.sort((a, b) => rank(a) - rank(b));
      const failures: string[] = [];
      const timings: string[] = [];
      let reached = 0;
      for (const op of chosen) {
        const started = process.hrtime.bigint();
        const seen: Record<string, number> = {};
        try {
          await fc.assert(
            fc.asyncProperty(drawFor(op, w, d, hints), async (x) => {
              const { url, res } = await send(t, w, op, x);
              const bucket = process.env.FUZZ_TIMINGS === 'codes' ? `${res.statusCode} ${res.statusCode >= 400 ? (/"code":"(\w+)"/.exec(res.body)?.[1] ?? '') : ''}` : `${Math.floor(res.statusCode / 100)}xx`;
              seen[bucket] = (seen[bucket] ?? 0) + 1;
              assertContract(op.key, url, res.statusCode, res.headers['content-type'], res.body, x.accept);
            }),
            { seed: SEED, numRuns: RUNS, endOnFailure: true },
          );
        } catch (err) {
          failures.push(`${op.key}: ${err instanceof Error ? err.message.split('\n').slice(0, 12).join('\n') : String(err)}`);
        }
        timings.push(`${op.key} ${Number(process.hrtime.bigint() - started) / 1e6 | 0} ms ${JSON.stringify(seen)}`);
        if (Object.keys(seen).some((k) => k.startsWith('2'))) reached += 1;
      }
      if (process.env.FUZZ_TIMINGS) console.log(timings.join('\n'));
      console.log(`fuzzed ${chosen.length} operations x ${RUNS} runs (seed ${SEED}); ${reached} of them answered 2xx at least once`);
      // The generated inputs must reach the handlers, not only the validation and auth walls.
      assert.ok(reached >= chosen.length * 0.8, `only ${reached} of ${chosen.length} operations ever succeeded:\n${timings.join('\n')}`);
      if (failures.length) assert.fail(`${failures.length} operation(s) broke the contract:\n${failures.join('\n\n')}`);
    });
  });
}
