import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { body, buildTestApp, type TestApp, type Headers } from '../helpers.js';
import { createKey, login, signUp, type TestUser } from '../factories.js';

// A dispatch team for the dispatch tests: an org owned by Olga with an admin, two responders
// (members) and a stranger in another org. Everyone acts by session cookie; `testKey` is Olga's
// test-mode key.

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

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

export interface DispatchWorld {
  t: TestApp;
  owner: TestUser;
  admin: TestUser;
  ann: TestUser;
  ben: TestUser;
  stranger: TestUser;
  orgId: number;
  orgSlug: string;
  testKey: Headers;
  as(u: TestUser): Headers;
  call(headers: Headers, method: Method, url: string, payload?: object, extra?: Headers): Promise<LightMyRequestResponse>;
  ok<T>(headers: Headers, method: Method, url: string, payload?: object, status?: number): Promise<T>;
  incident(headers: Headers, fields?: object): Promise<IncidentView>;
  timeline(headers: Headers, id: number): Promise<TimelineView[]>;
  close(): Promise<void>;
}

export async function dispatchWorld(env: Record<string, string> = {}): Promise<DispatchWorld> {
  const t = await buildTestApp(env);
  const owner = await signUp(t.app, { name: 'Olga Owner' });
  const admin = await signUp(t.app, { name: 'Adam Admin' });
  const ann = await signUp(t.app, { name: 'Ann Responder' });
  const ben = await signUp(t.app, { name: 'Ben Responder' });
  const stranger = await signUp(t.app, { name: 'Stan Stranger' });
  const as = (u: TestUser): Headers => ({ cookie: u.cookie });
  const call = (headers: Headers, method: Method, url: string, payload?: object, extra: Headers = {}) =>
    t.app.inject({ method, url, headers: { ...headers, ...extra }, ...(payload ? { payload } : {}) });
  async function ok<T>(headers: Headers, method: Method, url: string, payload?: object, status = method === 'POST' ? 201 : 200): Promise<T> {
    const res = await call(headers, method, url, payload);
    assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    return body<T>(res);
  }
  for (const [u, role] of [[admin, 'admin'], [ann, 'member'], [ben, 'member']] as const) {
    await ok(as(owner), 'POST', `/v1/orgs/${owner.slug}/members`, { email: u.email, role });
  }
  const orgs = await ok<{ orgs: { id: number; slug: string; primary: boolean }[] }>(as(owner), 'GET', '/v1/orgs');
  const org = orgs.orgs.find((o) => o.primary)!;
  const testKey = { 'x-api-key': (await createKey(t.app, owner.cookie, 'test')).key };
  return {
    t,
    owner,
    admin,
    ann,
    ben,
    stranger,
    orgId: org.id,
    orgSlug: org.slug,
    testKey,
    as,
    call,
    ok,
    incident: (headers, fields = {}) => ok<IncidentView>(headers, 'POST', '/v1/tickets', { title: 'Gas smell in stairwell', org_id: org.id, ...fields }),
    timeline: async (headers, id) => (await ok<{ events: TimelineView[] }>(headers, 'GET', `/v1/tickets/${id}/timeline`)).events,
    close: () => t.close(),
  };
}

/** New sessions for everyone of the world, after a test moved the clock past their 14 days. */
export async function signInAgain(w: DispatchWorld): Promise<void> {
  for (const u of [w.owner, w.admin, w.ann, w.ben, w.stranger]) u.cookie = await login(w.t.app, u.email, u.password);
}
