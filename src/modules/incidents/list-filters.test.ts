import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';

// The dispatcher's console filters of GET /v1/tickets (issue 20): q, source, assignee_id=none,
// sort and with_counts; scoped like every list, validated with 422.
interface Incident {
  Id: number;
  title: string;
  status: string;
  priority: string;
  source: string;
  sla_due_at: string;
  assignee_id: number | null;
}
interface List {
  tickets: Incident[];
  total: number;
  counts?: Record<string, number>;
}

describe('incident list: search, source, unassigned, sort, counts', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  const ids: Record<string, number> = {};
  before(async () => {
    t = await buildTestApp();
    owner = await signUp(t.app, { name: 'Owner' });
    member = await signUp(t.app, { name: 'Member' });
    stranger = await signUp(t.app, { name: 'Stranger' });
    await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: member.email } });
    const make = async (key: string, payload: object) => {
      const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: owner.cookie }, payload });
      assert.equal(res.statusCode, 201, res.body);
      ids[key] = body<Incident>(res).Id;
    };
    await make('gas', { title: 'Gas smell at the school', priority: 'low' });
    await make('fire', { title: 'Smoke seen', description: 'Near the GAS station, 100%_sure', priority: 'urgent', source: 'webhook' });
    await make('ref', { title: 'Water leak', source: 'email', source_ref: 'MAIL-Gas-7', priority: 'high' });
    await make('dash', { title: 'Fallen tree', source: 'dashboard', priority: 'normal' });
    await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${ids.dash}`, headers: { cookie: owner.cookie }, payload: { assignee_id: member.id } });
    await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${ids.ref}`, headers: { cookie: owner.cookie }, payload: { status: 'resolved' } });
    // Another org's incident, matching every search: never listed.
    await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: stranger.cookie }, payload: { title: 'Gas smell elsewhere', source: 'webhook' } });
    // A test-mode incident of the owner: never in a live list.
    const testKey = (await createKey(t.app, owner.cookie, 'test')).key;
    await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { 'x-api-key': testKey }, payload: { title: 'Gas test' } });
  });
  after(() => t.close());

  async function list(query: string, u: TestUser = owner): Promise<List> {
    const res = await t.app.inject({ method: 'GET', url: `/v1/tickets?${query}`, headers: { cookie: u.cookie } });
    assert.equal(res.statusCode, 200, res.body);
    return body<List>(res);
  }
  const idsOf = (l: List) => l.tickets.map((i) => i.Id);

  test('q searches title, description and reference, case-insensitively, within the scope', async () => {
    const l = await list('q=gas');
    assert.deepEqual(new Set(idsOf(l)), new Set([ids.gas, ids.fire, ids.ref]));
    assert.equal(l.total, 3);
    assert.deepEqual(idsOf(await list('q=SMOKE')), [ids.fire]);
    assert.deepEqual(idsOf(await list('q=mail-gas')), [ids.ref]);
  });

  test('q treats % and _ literally and matches an id written #n', async () => {
    assert.deepEqual(idsOf(await list(`q=${encodeURIComponent('100%_sure')}`)), [ids.fire]);
    assert.deepEqual(idsOf(await list(`q=${encodeURIComponent('%')}`)), [ids.fire]);
    assert.deepEqual(idsOf(await list(`q=${encodeURIComponent('_')}`)), [ids.fire]);
    assert.deepEqual(idsOf(await list(`q=${encodeURIComponent(`#${ids.dash}`)}`)), [ids.dash]);
  });

  test('source filters, and an incident made in the dashboard keeps source dashboard', async () => {
    assert.deepEqual(idsOf(await list('source=webhook')), [ids.fire]);
    const dash = await list('source=dashboard');
    assert.deepEqual(idsOf(dash), [ids.dash]);
    assert.equal(dash.tickets[0]?.source, 'dashboard');
    assert.equal((await list('source=api')).total, 1);
  });

  test('assignee_id=none lists the unassigned, =me the caller\'s', async () => {
    const none = await list('assignee_id=none');
    assert.deepEqual(new Set(idsOf(none)), new Set([ids.gas, ids.fire, ids.ref]));
    assert.equal(none.total, 3);
    assert.deepEqual(idsOf(await list('assignee_id=me', member)), [ids.dash]);
  });

  test('sort: newest by default, priority urgent first, sla_due soonest first', async () => {
    assert.deepEqual(idsOf(await list('')), [ids.dash, ids.ref, ids.fire, ids.gas]);
    assert.deepEqual(idsOf(await list('sort=priority')), [ids.fire, ids.ref, ids.dash, ids.gas]);
    const due = await list('sort=sla_due');
    assert.deepEqual(idsOf(due), [ids.fire, ids.ref, ids.dash, ids.gas]);
    const times = due.tickets.map((i) => Date.parse(i.sla_due_at));
    assert.deepEqual(times, [...times].sort((a, b) => a - b));
  });

  test('with_counts answers per status under the other filters, from the counters or counted', async () => {
    const all = await list('with_counts=true');
    assert.deepEqual(all.counts, { open: 3, in_progress: 0, resolved: 1, closed: 0 });
    const open = await list('status=open&with_counts=true');
    assert.equal(open.total, 3);
    assert.deepEqual(open.counts, { open: 3, in_progress: 0, resolved: 1, closed: 0 });
    const gas = await list('q=gas&with_counts=true');
    assert.deepEqual(gas.counts, { open: 2, in_progress: 0, resolved: 1, closed: 0 });
    const urgent = await list('priority=urgent&with_counts=true');
    assert.deepEqual(urgent.counts, { open: 1, in_progress: 0, resolved: 0, closed: 0 });
    assert.equal((await list('')).counts, undefined);
  });

  test('filters combine, with paging and total', async () => {
    const l = await list('q=gas&assignee_id=none&source=webhook&sort=priority&limit=1');
    assert.deepEqual(idsOf(l), [ids.fire]);
    assert.equal(l.total, 1);
    const p = await list('q=gas&limit=1&page=2');
    assert.equal(p.total, 3);
    assert.deepEqual(idsOf(p), [ids.fire]);
  });

  test('bad values are 422 naming the field', async () => {
    for (const [query, field] of [
      ['sort=oldest', 'sort'],
      ['source=phone', 'source'],
      ['q=', 'q'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['q=%20%20', 'q'],
      ['assignee_id=nobody', 'assignee_id'],
      ['with_counts=maybe', 'with_counts'],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/tickets?${query}`, headers: { cookie: owner.cookie } });
      assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
      const details = body<{ details: { field: string }[] }>(res).details;
      assert.ok(details.some((d) => d.field.includes(field)), `${query}: ${res.body}`);
    }
  });
});
