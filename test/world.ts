// The one world builder of the tests: people signed up in order (with their keys and plans), an org
// with members in their roles and a team, and calls made as them. A suite describes its cast (the
// dispatch team below, the integrations' owner and member, the security fixture, the booking host of
// the browser tests) and adds what is its own on top. It is built through the API only, in process
// (`appApi`) or over HTTP against a real server (test/browser/harness.ts: `serverApi`).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { body, buildTestApp, type Headers, type Method, type TestApp } from './helpers.js';
import { login, signUp, type TestUser } from './factories.js';

export type Role = 'owner' | 'admin' | 'member';
export type Plan = 'free' | 'starter' | 'agency' | 'enterprise';
type Payload = Record<string, unknown>;

/** What a world is built through. */
export interface WorldApi {
  /** Registers a user (address proven) and signs them in. */
  signUp: (fields: { name?: string; email?: string; timezone?: string }) => Promise<TestUser>;
  /** The JSON answer of a call; fails unless its status is `status` (201 for POST, else 200). */
  ok: <T = Payload>(headers: Headers, method: Method, url: string, payload?: object, status?: number) => Promise<T>;
}

/** The status a call must answer: `status` when given, else 201 for POST and 200 for the rest. */
export const expectedStatus = (method: string, status?: number) => status ?? (method === 'POST' ? 201 : 200);

/** Injects a request into the app: `payload` as JSON, `extra` headers on top of `headers`. */
export function inject(app: FastifyInstance, headers: Headers, method: Method, url: string, payload?: unknown, extra: Headers = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method, url, headers: { ...headers, ...extra }, ...(payload === undefined ? {} : { payload: payload as object }) });
}

/** The app in process, through app.inject. */
export function appApi(app: FastifyInstance): WorldApi {
  async function ok<T>(headers: Headers, method: Method, url: string, payload?: object, status?: number): Promise<T> {
    const res = await inject(app, headers, method, url, payload);
    assert.equal(res.statusCode, expectedStatus(method, status), `${method} ${url}: ${res.body}`);
    return body<T>(res);
  }
  return { signUp: (fields) => signUp(app, fields), ok };
}

const apiOf = (target: FastifyInstance | WorldApi): WorldApi => ('inject' in target ? appApi(target) : target);
export const cookieOf = (u: { cookie: string }): Headers => ({ cookie: u.cookie });

/** Moves a user to a plan, as an instance admin (the first user of the instance). */
export const liftPlan = (api: WorldApi, admin: { cookie: string }, user: { id: number }, plan: Plan) =>
  api.ok(cookieOf(admin), 'PATCH', `/v1/users/${user.id}`, { plan });

export interface OrgSpec {
  /** Who makes the org and owns it. */
  by: { id: number; cookie: string };
  /** An instance admin who moves `by` to the agency plan first (making orgs takes a plan that allows them). */
  lift?: { cookie: string };
  /** The org's name (a fresh one when left out); `personal: true` takes `by`'s own org instead of making one. */
  name?: string;
  personal?: boolean;
  /** More fields of the new org (description...). */
  fields?: Payload;
  /** Added by email, in this order. */
  members?: readonly { user: { email: string }; role: Role }[];
  /** A team made by `by` (who is in it by making it), with these members added. */
  team?: { name: string; fields?: Payload; members?: readonly { id: number }[] };
}

export interface Org {
  id: number;
  slug: string;
  /** The team's slug, when the spec asked for one. */
  team?: string;
}

/** An org through the API: made (or `by`'s own), its members added with their roles, and a team. */
export async function sharedOrg(target: FastifyInstance | WorldApi, spec: OrgSpec): Promise<Org> {
  const api = apiOf(target);
  const as = cookieOf(spec.by);
  if (spec.lift) await liftPlan(api, spec.lift, spec.by, 'agency');
  let org: { id: number; slug: string };
  if (spec.personal) {
    const { orgs } = await api.ok<{ orgs: { id: number; slug: string; primary: boolean }[] }>(as, 'GET', '/v1/orgs');
    org = orgs.find((o) => o.primary)!;
  } else {
    const name = spec.name ?? `Shared Org ${randomBytes(3).toString('hex')}`;
    org = await api.ok<{ id: number; slug: string }>(as, 'POST', '/v1/orgs', { name, ...spec.fields });
  }
  for (const m of spec.members ?? []) await api.ok(as, 'POST', `/v1/orgs/${org.slug}/members`, { email: m.user.email, role: m.role });
  if (!spec.team) return { id: org.id, slug: org.slug };
  const team = (await api.ok<{ slug: string }>(as, 'POST', `/v1/orgs/${org.slug}/teams`, { name: spec.team.name, ...spec.team.fields })).slug;
  for (const u of spec.team.members ?? []) await api.ok(as, 'POST', `/v1/orgs/${org.slug}/teams/${team}/members`, { user_id: u.id });
  return { id: org.id, slug: org.slug, team };
}

export interface PersonSpec {
  name: string;
  email?: string;
  timezone?: string;
  /** Set by the world's instance admin once everyone is signed up. */
  plan?: Plan;
  /** API keys made right after signing up, by mode, with their names. */
  keys?: { live?: string; test?: string };
}

export interface Person extends TestUser {
  liveKey?: string;
  liveKeyId?: number;
  testKey?: string;
  testKeyId?: number;
}

export interface WorldSpec<P extends string> {
  /** Signed up in this order (the first user of an instance is its admin); a TestUser is taken as it is. */
  people: Record<P, PersonSpec | TestUser>;
  /** Who sets the plans: an instance admin (default: the first of `people`). */
  admin?: NoInfer<P> | { cookie: string };
  /** The world's org, by one of the people, with members of the people. */
  org?: Omit<OrgSpec, 'by' | 'members' | 'team' | 'lift'> & {
    by: NoInfer<P>;
    /** When set, this person (an instance admin) moves `by` to the agency plan first. */
    lift?: NoInfer<P>;
    members?: Partial<Record<NoInfer<P>, Role>>;
    team?: { name: string; fields?: Payload; members?: NoInfer<P>[] };
  };
}

export interface Cast<P extends string> {
  people: Record<P, Person>;
  org?: Org;
}

const isUser = (p: PersonSpec | TestUser): p is TestUser => 'cookie' in p;

/** Builds a world's cast through `api`: people (and their keys), plans, then the org. */
export async function castWorld<P extends string>(target: FastifyInstance | WorldApi, spec: WorldSpec<P>): Promise<Cast<P>> {
  const api = apiOf(target);
  const people = {} as Record<P, Person>;
  const names = Object.keys(spec.people) as P[];
  for (const who of names) {
    const p = spec.people[who];
    if (isUser(p)) {
      people[who] = p;
      continue;
    }
    const user: Person = await api.signUp({ name: p.name, ...(p.email ? { email: p.email } : {}), ...(p.timezone ? { timezone: p.timezone } : {}) });
    for (const mode of ['live', 'test'] as const) {
      const name = p.keys?.[mode];
      if (name === undefined) continue;
      const k = await api.ok<{ id: number; key: string }>(cookieOf(user), 'POST', '/v1/api-keys', { name, mode });
      if (mode === 'live') Object.assign(user, { liveKey: k.key, liveKeyId: k.id });
      else Object.assign(user, { testKey: k.key, testKeyId: k.id });
    }
    people[who] = user;
  }
  const admin = typeof spec.admin === 'object' ? spec.admin : people[spec.admin ?? names[0]!];
  for (const who of names) {
    const p = spec.people[who];
    if (!isUser(p) && p.plan) await liftPlan(api, admin, people[who], p.plan);
  }
  if (!spec.org) return { people };
  const o = spec.org;
  const members = (Object.entries(o.members ?? {}) as [P, Role][]).map(([who, role]) => ({ user: people[who], role }));
  const team = o.team && { ...o.team, members: (o.team.members ?? []).map((who) => people[who]) };
  const org = await sharedOrg(api, { ...o, by: people[o.by], lift: o.lift && people[o.lift], members, team });
  return { people, org };
}

/** A world in one app: its cast, and calls as anyone (`as(person)` is their session cookie). */
export interface World<P extends string> extends Cast<P> {
  t: TestApp;
  as: (u: { cookie: string }) => Headers;
  call: (headers: Headers, method: Method, url: string, payload?: unknown, extra?: Headers) => Promise<LightMyRequestResponse>;
  ok: WorldApi['ok'];
}

export async function buildWorld<P extends string>(t: TestApp, spec: WorldSpec<P>): Promise<World<P>> {
  const api = appApi(t.app);
  const cast = await castWorld(api, spec);
  return { ...cast, t, as: cookieOf, call: (headers, method, url, payload, extra) => inject(t.app, headers, method, url, payload, extra), ok: api.ok };
}

// ---------------------------------------------------------------------------------------------
// The dispatch team: an org owned by Olga with an admin, two responders (members) and a stranger
// in another org. Everyone acts by session cookie; `testKey` is Olga's test-mode key.
// ---------------------------------------------------------------------------------------------

export interface IncidentView {
  Id: number;
  org_id: number;
  livemode: boolean;
  title: string;
  description: string | null;
  status: string;
  priority: string;
  source: string;
  lat: number | null;
  lng: number | null;
  assignee_id: number | null;
  acknowledged_at: string | null;
  acknowledged_by: number | null;
}

export interface TimelineView {
  id: number;
  incident_id: number;
  type: string;
  at: string;
  actor: { user_id: number; user_name: string } | null;
  data: Record<string, unknown>;
}

type DispatchCast = 'owner' | 'admin' | 'ann' | 'ben' | 'stranger';

export interface DispatchWorld extends Omit<World<DispatchCast>, 'people' | 'org'> {
  owner: TestUser;
  admin: TestUser;
  ann: TestUser;
  ben: TestUser;
  stranger: TestUser;
  orgId: number;
  orgSlug: string;
  testKey: Headers;
  incident(headers: Headers, fields?: object): Promise<IncidentView>;
  timeline(headers: Headers, id: number): Promise<TimelineView[]>;
  close(): Promise<void>;
}

export async function dispatchWorld(env: Record<string, string> = {}): Promise<DispatchWorld> {
  const t = await buildTestApp(env);
  const w = await buildWorld(t, {
    people: {
      owner: { name: 'Olga Owner', keys: { test: 'test key' } },
      admin: { name: 'Adam Admin' },
      ann: { name: 'Ann Responder' },
      ben: { name: 'Ben Responder' },
      stranger: { name: 'Stan Stranger' },
    },
    org: { by: 'owner', personal: true, members: { admin: 'admin', ann: 'member', ben: 'member' } },
  });
  const org = w.org!;
  return {
    ...w,
    ...w.people,
    orgId: org.id,
    orgSlug: org.slug,
    testKey: { 'x-api-key': w.people.owner.testKey! },
    incident: (headers, fields = {}) => w.ok<IncidentView>(headers, 'POST', '/v1/tickets', { title: 'Gas smell in stairwell', org_id: org.id, ...fields }),
    timeline: async (headers, id) => (await w.ok<{ events: TimelineView[] }>(headers, 'GET', `/v1/tickets/${id}/timeline`)).events,
    close: () => t.close(),
  };
}

/** New sessions for everyone of the world, after a test moved the clock past their 14 days. */
export async function signInAgain(w: DispatchWorld): Promise<void> {
  for (const u of [w.owner, w.admin, w.ann, w.ben, w.stranger]) u.cookie = await login(w.t.app, u.email, u.password);
}

// ---------------------------------------------------------------------------------------------
// The integrations' world: an org owner with a live and a test key, and a member of their org.
// ---------------------------------------------------------------------------------------------

export interface CreatedIntegration {
  id: number;
  key: string;
  livemode: boolean;
  org_id: number;
  events_url: string;
  alertmanager_url: string;
  grafana_url: string;
  email_address: string | null;
  default_assignee_id: number | null;
}
export interface Ticket {
  Id: number;
  title: string;
  status: string;
  priority: string;
  source: string;
  source_ref: string | null;
  assignee_id: number | null;
  description: string | null;
  livemode: boolean;
}

export interface IntegrationsWorld {
  owner: TestUser;
  member: TestUser;
  liveKey: string;
  testKey: string;
  call: World<string>['call'];
  integration(headers?: Headers, body?: Record<string, unknown>): Promise<CreatedIntegration>;
  /** The path of one of an integration's URLs (tests inject; the host is PUBLIC_URL's). */
  path(url: string): string;
  tickets(headers: Headers, query?: string): Promise<Ticket[]>;
  timelineTypes(id: number): Promise<{ type: string; data: Record<string, unknown> }[]>;
}

export async function integrationsWorld(t: TestApp): Promise<IntegrationsWorld> {
  const w = await buildWorld(t, {
    people: { owner: { name: 'Olga Owner', keys: { live: 'live key', test: 'test key' } }, member: { name: 'Milo Member' } },
    org: { by: 'owner', personal: true, members: { member: 'member' } },
  });
  const { owner, member } = w.people;
  const liveKey = owner.liveKey!;
  return {
    owner,
    member,
    liveKey,
    testKey: owner.testKey!,
    call: w.call,
    integration: (headers = { 'x-api-key': liveKey }, fields = {}) => w.ok<CreatedIntegration>(headers, 'POST', '/v1/integrations', { name: 'Monitoring', ...fields }),
    path: (url) => new URL(url).pathname,
    tickets: async (headers, query = '') => (await w.ok<{ tickets: Ticket[] }>(headers, 'GET', `/v1/tickets${query}`)).tickets,
    timelineTypes: async (id) => (await w.ok<{ events: { type: string; data: Record<string, unknown> }[] }>({ 'x-api-key': liveKey }, 'GET', `/v1/tickets/${id}/timeline`)).events,
  };
}
