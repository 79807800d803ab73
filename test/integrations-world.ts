// Shared set-up of the integration tests: an org owner, a member, and helpers to call as them.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp, Headers } from './helpers.js';
import { createKey, signUp, type TestUser } from './factories.js';

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

export interface World {
  owner: TestUser;
  member: TestUser;
  liveKey: string;
  testKey: string;
  call(headers: Headers, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse>;
  integration(headers?: Headers, body?: Record<string, unknown>): Promise<CreatedIntegration>;
  /** The path of one of an integration's URLs (tests inject; the host is PUBLIC_URL's). */
  path(url: string): string;
  tickets(headers: Headers, query?: string): Promise<Ticket[]>;
  timelineTypes(id: number): Promise<{ type: string; data: Record<string, unknown> }[]>;
}

export async function buildWorld(t: TestApp): Promise<World> {
  const owner = await signUp(t.app, { name: 'Olga Owner' });
  const member = await signUp(t.app, { name: 'Milo Member' });
  const added = await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: member.email } });
  assert.equal(added.statusCode, 201, added.body);
  const liveKey = (await createKey(t.app, owner.cookie, 'live')).key;
  const testKey = (await createKey(t.app, owner.cookie, 'test')).key;
  const call: World['call'] = (headers, method, url, payload) =>
    t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  return {
    owner,
    member,
    liveKey,
    testKey,
    call,
    async integration(headers = { 'x-api-key': liveKey }, body = {}) {
      const res = await call(headers, 'POST', '/v1/integrations', { name: 'Monitoring', ...body });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<CreatedIntegration>();
    },
    path: (url) => new URL(url).pathname,
    async tickets(headers, query = '') {
      const res = await call(headers, 'GET', `/v1/tickets${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ tickets: Ticket[] }>().tickets;
    },
    async timelineTypes(id) {
      const res = await call({ 'x-api-key': liveKey }, 'GET', `/v1/tickets/${id}/timeline`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json<{ events: { type: string; data: Record<string, unknown> }[] }>().events;
    },
  };
}
