import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CompiledQuery } from 'kysely';
import { body, buildTestApp, queryPlan, testDialect, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import type { Scope } from '../../db/scope.js';
import { buildListQuery, listQuery, type ListFilter } from './incidents.repository.js';

// The incident list at a million rows (issue 19): each sort walks an index of the caller's org and
// mode and stops at the page (migration 0018), and the list's statements, compiled once per shape,
// carry each request's values.
interface List {
  tickets: { Id: number; status: string; priority: string; org_id: number }[];
  total: number;
}

describe('incident list: plans and compiled shapes', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgA: number;
  let orgB: number;
  before(async () => {
    t = await buildTestApp();
    owner = await signUp(t.app, { name: 'Owner' });
    const orgs = await t.app.inject({ method: 'GET', url: '/v1/orgs', headers: { cookie: owner.cookie } });
    orgA = body<{ orgs: { id: number; primary: boolean }[] }>(orgs).orgs.find((o) => o.primary)!.id;
    // A second org of the caller: another user's, which the caller joins.
    const other = await signUp(t.app, { name: 'Other' });
    const joined = await t.app.inject({ method: 'POST', url: `/v1/orgs/${other.slug}/members`, headers: { cookie: other.cookie }, payload: { email: owner.email } });
    assert.equal(joined.statusCode, 201, joined.body);
    const theirs = await t.app.inject({ method: 'GET', url: '/v1/orgs', headers: { cookie: other.cookie } });
    orgB = body<{ orgs: { id: number; primary: boolean }[] }>(theirs).orgs.find((o) => o.primary)!.id;
    const make = async (payload: object) => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: owner.cookie }, payload });
      assert.equal(res.statusCode, 201, res.body);
      return body<{ Id: number }>(res).Id;
    };
    for (const priority of ['low', 'urgent', 'normal', 'high', 'urgent']) await make({ title: `A ${priority}`, priority, org_id: orgA });
    for (const priority of ['high', 'low']) await make({ title: `B ${priority}`, priority, org_id: orgB });
    const resolved = await make({ title: 'A resolved', priority: 'normal', org_id: orgA });
    const patch = await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${resolved}`, headers: { cookie: owner.cookie }, payload: { status: 'resolved' } });
    assert.equal(patch.statusCode, 200, patch.body);
  });
  after(() => t.close());

  /** The plan of a list query; on PostgreSQL with full sorts priced out, so it still sorts only when no index gives the order. */
  const plan = (q: CompiledQuery) => queryPlan(t.ctx.db, q, 'enable_sort');

  test('each sort walks its index within the org and mode, with no sort of the org\'s rows', async () => {
    const scope: Scope = { orgIds: [orgA], mode: 'live' };
    for (const [sort, index] of [
      ['newest', 'incidents_scope_idx'],
      ['priority', 'incidents_priority_rank_idx'],
      // The index orders by due time; incidents due at the same instant are sorted by id among themselves.
      ['sla_due', 'incidents_sla_due_list_idx'],
    ] as const) {
      const text = await plan(listQuery(t.ctx.db, scope, { sort }, 50, 0));
      assert.ok(text.includes(index), `sort=${sort}: ${text}`);
      if (testDialect === 'sqlite') assert.doesNotMatch(text, /TEMP B-TREE FOR ORDER BY/, `sort=${sort}: ${text}`);
      else assert.doesNotMatch(text, /(^|->\s+)Sort\b/m, `sort=${sort}: ${text}`);
    }
  });

  test('sort=priority answers urgent first, newest first within, across the caller\'s orgs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/tickets?sort=priority&limit=200', headers: { cookie: owner.cookie } });
    assert.equal(res.statusCode, 200, res.body);
    const tickets = body<List>(res).tickets;
    assert.equal(tickets.length, 8);
    const rank = { urgent: 0, high: 1, normal: 2, low: 3 } as Record<string, number>;
    for (let i = 1; i < tickets.length; i++) {
      const [a, b] = [tickets[i - 1]!, tickets[i]!];
      assert.ok(rank[a.priority]! < rank[b.priority]! || (a.priority === b.priority && a.Id > b.Id), JSON.stringify(tickets));
    }
  });

  test('a statement compiled once per shape is the one Kysely builds for each request', () => {
    const cases: [Scope, ListFilter, number, number][] = [
      [{ orgIds: [orgA], mode: 'live' }, {}, 50, 0],
      [{ orgIds: [orgB], mode: 'live' }, {}, 10, 30],
      [{ orgIds: [orgA, orgB], mode: 'test' }, { sort: 'priority' }, 7, 0],
      [{ orgIds: [orgB, orgA], mode: 'test' }, { sort: 'priority' }, 8, 16],
      [{ orgIds: [orgA], mode: 'live' }, { status: 'open', priority: 'high', assigneeId: 3, source_ref: 'r-1', source: 'email', sort: 'sla_due' }, 20, 40],
      [{ orgIds: [orgB], mode: 'live' }, { status: 'closed', priority: 'low', assigneeId: 9, source_ref: 'r-2', source: 'api', sort: 'sla_due' }, 5, 5],
      [{ orgIds: [orgA], mode: 'live' }, { unassigned: true, status: 'resolved' }, 50, 0],
      [{ orgIds: [], mode: 'live' }, { priority: 'urgent' }, 50, 0],
    ];
    for (const [scope, f, limit, offset] of cases) {
      const cached = listQuery(t.ctx.db, scope, f, limit, offset);
      const fresh = buildListQuery(t.ctx.db, scope, f, limit, offset);
      assert.equal(cached.sql, fresh.sql, JSON.stringify([scope, f]));
      assert.deepEqual(cached.parameters, fresh.parameters, JSON.stringify([scope, f]));
    }
  });

  test('lists of one shape in a row answer each its own values: orgs, filters, pages and totals', async () => {
    const list = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/tickets?${query}`, headers: { cookie: owner.cookie } });
      assert.equal(res.statusCode, 200, res.body);
      return body<List>(res);
    };
    const a = await list(`org_id=${orgA}`);
    const b = await list(`org_id=${orgB}`);
    assert.equal(a.total, 6);
    assert.ok(a.tickets.every((i) => i.org_id === orgA));
    assert.equal(b.total, 2);
    assert.ok(b.tickets.every((i) => i.org_id === orgB));
    const open = await list('status=open');
    const resolved = await list('status=resolved');
    assert.equal(open.total, 7);
    assert.ok(open.tickets.every((i) => i.status === 'open'));
    assert.equal(resolved.total, 1);
    assert.deepEqual(resolved.tickets.map((i) => i.status), ['resolved']);
    const urgent = await list('priority=urgent');
    const low = await list('priority=low');
    assert.deepEqual([urgent.total, low.total], [2, 2]);
    assert.ok(urgent.tickets.every((i) => i.priority === 'urgent') && low.tickets.every((i) => i.priority === 'low'));
    const first = await list('limit=3&page=1');
    const second = await list('limit=3&page=2');
    assert.equal(first.tickets.length, 3);
    assert.equal(second.tickets.length, 3);
    assert.ok(first.tickets[2]!.Id > second.tickets[0]!.Id);
  });
});
