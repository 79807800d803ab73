import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { body, buildTestApp, testDialect, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import type { IncidentStatus } from '../../db/schema.js';
import { ListCache } from './list-cache.js';
import { VIEW_COLUMNS } from './incidents.repository.js';
import { nextSlaChange, slaState } from './sla.js';

// Issue 19: the incident list keeps serialised pages (list-cache.ts) while the org's incidents are
// unchanged (a version bumped by triggers in every writing transaction, migration 0019) and until
// the page's next SLA transition.

describe('ListCache', () => {
  const page = (n: number) => Buffer.alloc(n, 'x');

  test('answers a page only under the version it was kept with, before it expires and not before it was built', () => {
    const c = new ListCache();
    c.set('k', 'v1', page(10), 1_000, 2_000);
    assert.equal(c.get('k', 'v1', 1_000)?.length, 10);
    assert.equal(c.get('k', 'v1', 1_999)?.length, 10);
    assert.equal(c.get('k', 'v2', 1_500), undefined, 'another version');
    assert.equal(c.get('k', 'v1', 2_000), undefined, 'at its expiry');
    assert.equal(c.get('k', 'v1', 999), undefined, 'a clock set back before the page was built');
    assert.equal(c.get('other', 'v1', 1_500), undefined);
    assert.deepEqual([c.hits, c.misses], [2, 4]);
  });

  test('is bounded in entries and bytes, the least recently used going first; pages over an eighth of the bytes are not kept', () => {
    const c = new ListCache(3, 800);
    c.set('a', 'v', page(100), 0, 10);
    c.set('b', 'v', page(100), 0, 10);
    c.set('c', 'v', page(100), 0, 10);
    assert.ok(c.get('a', 'v', 1)); // a is now the most recently used
    c.set('d', 'v', page(100), 0, 10);
    assert.equal(c.size, 3);
    assert.equal(c.get('b', 'v', 1), undefined, 'b was the least recently used');
    assert.ok(c.get('a', 'v', 1));
    c.set('e', 'v', page(101), 0, 10);
    assert.equal(c.get('e', 'v', 1), undefined, 'over 800 / 8 bytes');
    c.set('a', 'v', page(50), 0, 10); // replaced, not counted twice
    assert.equal(c.bytes, 250);
    const bytes = new ListCache(10, 800);
    for (const k of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']) bytes.set(k, 'v', page(100), 0, 10);
    assert.equal(bytes.bytes, 800);
    assert.equal(bytes.get('a', 'v', 1), undefined);
    assert.ok(bytes.get('i', 'v', 1));
    bytes.resize(2, 800);
    assert.equal(bytes.size, 2);
    assert.ok(bytes.get('i', 'v', 1), 'the most recently used stay');
    bytes.resize(0, 800);
    bytes.set('j', 'v', page(1), 0, 10);
    assert.equal(bytes.size, 0, 'nothing is kept at 0 entries');
  });
});

describe('nextSlaChange', () => {
  test('slaState is the same from `now` until the instant it names and different at it', () => {
    const base = Date.parse('2026-01-05T12:00:00.000Z');
    const statuses: IncidentStatus[] = ['open', 'in_progress', 'resolved', 'closed'];
    let checked = 0;
    for (const status of statuses)
      for (const resolved of [null, base - 1_000, base + 10_000])
        for (let now = base - 5_000; now <= base + 20_000; now += 500) {
          const row = { status, sla_warn_at: new Date(base).toISOString(), sla_due_at: new Date(base + 4_000).toISOString(), resolved_at: resolved === null ? null : new Date(resolved).toISOString() };
          const at = (t: number) => JSON.stringify(slaState(row, new Date(t)));
          const next = nextSlaChange(row, now);
          const horizon = Number.isFinite(next) ? next : now + 60_000;
          for (let t = now; t < horizon; t += 250) assert.equal(at(t), at(now), `${status} resolved ${resolved} now ${now}: changed at ${t} before ${next}`);
          if (Number.isFinite(next)) assert.notEqual(at(next), at(now), `${status} now ${now}: ${next} is no change`);
          checked += 1;
        }
    assert.equal(checked, 4 * 3 * 51);
  });
});

interface Ticket {
  Id: number;
  title: string;
  status: string;
  sla_status: string;
}
interface List {
  tickets: Ticket[];
  total: number;
}

describe(`incident list cache on ${testDialect}`, () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let member: TestUser;
  before(async () => {
    t = await buildTestApp();
    owner = await signUp(t.app, { name: 'Owner' });
    other = await signUp(t.app, { name: 'Other' });
    member = await signUp(t.app, { name: 'Member' });
    const added = await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: member.email } });
    assert.equal(added.statusCode, 201, added.body);
    for (const title of ['First', 'Second']) await create(owner, { title, priority: 'urgent' });
    await create(other, { title: 'Elsewhere' });
  });
  after(() => t.close());

  async function create(u: TestUser, payload: object): Promise<Ticket> {
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: u.cookie }, payload });
    assert.equal(res.statusCode, 201, res.body);
    return body<Ticket>(res);
  }
  async function listRaw(u: TestUser = owner, query = 'limit=50') {
    const res = await t.app.inject({ method: 'GET', url: `/v1/tickets?${query}`, headers: { cookie: u.cookie } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    return res;
  }
  const list = async (u: TestUser = owner, query?: string) => body<List>(await listRaw(u, query));
  /** Lists twice and asserts the second answer came from the cache, byte for byte; answers it. */
  async function cachedList(u: TestUser = owner, query?: string): Promise<List> {
    const first = await listRaw(u, query);
    const hits = t.ctx.listCache.hits;
    const second = await listRaw(u, query);
    assert.equal(t.ctx.listCache.hits, hits + 1, 'the second list is a cache hit');
    assert.equal(second.body, first.body);
    return body<List>(second);
  }
  const titles = (l: List) => l.tickets.map((i) => i.title);

  test('a repeated list is served from the cache, the same bytes; another filter or page is its own entry', async () => {
    assert.deepEqual(titles(await cachedList()), ['Second', 'First']);
    assert.deepEqual(titles(await cachedList(owner, 'limit=1&page=2')), ['First']);
    const hits = t.ctx.listCache.hits;
    assert.deepEqual(titles(await list(owner, 'limit=1')), ['Second']);
    assert.equal(t.ctx.listCache.hits, hits, 'limit=1 was never listed before');
  });

  test('each API write of the org is seen by the next list: create, update, reply, delete', async () => {
    await cachedList();
    const third = await create(owner, { title: 'Third', priority: 'low' });
    assert.deepEqual(titles(await cachedList()), ['Third', 'Second', 'First']);

    const patched = await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${third.Id}`, headers: { cookie: owner.cookie }, payload: { status: 'in_progress' } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal((await cachedList()).tickets[0]!.status, 'in_progress');

    const before = (await cachedList()).tickets[0]!;
    t.clock.advance(60_000);
    const replied = await t.app.inject({ method: 'POST', url: `/v1/tickets/${third.Id}/replies`, headers: { cookie: owner.cookie }, payload: { body: 'On it' } });
    assert.equal(replied.statusCode, 201, replied.body);
    const after = (await cachedList()).tickets[0] as Ticket & { updated_at: string };
    assert.notEqual(after.updated_at, (before as Ticket & { updated_at: string }).updated_at, 'a reply moves updated_at');

    const deleted = await t.app.inject({ method: 'DELETE', url: `/v1/tickets/${third.Id}`, headers: { cookie: owner.cookie } });
    assert.equal(deleted.statusCode, 200, deleted.body);
    const l = await cachedList();
    assert.deepEqual(titles(l), ['Second', 'First']);
    assert.equal(l.total, 2);
  });

  test("another org's writes leave this org's pages cached", async () => {
    await cachedList();
    await create(other, { title: 'Elsewhere again' });
    const hits = t.ctx.listCache.hits;
    assert.deepEqual(titles(await list()), ['Second', 'First']);
    assert.equal(t.ctx.listCache.hits, hits + 1);
    assert.deepEqual(titles(await list(other)), ['Elsewhere again', 'Elsewhere']);
  });

  /** Runs `statement` on a second connection to the app's database: another instance, a statement run by hand. */
  async function outside(statement: string): Promise<void> {
    if (testDialect === 'sqlite') {
      const other = new SQLite(path.join(t.ctx.config.dataDir, 'muster.db'));
      other.pragma('busy_timeout = 5000');
      other.exec(statement);
      other.close();
      return;
    }
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, options: `-c search_path=${t.ctx.database.schema}` });
    await client.connect();
    await client.query(statement);
    await client.end();
  }

  test('an update, an insert and a touch from another connection, outside this app, are each seen by the next list', async () => {
    const id = (await cachedList()).tickets[0]!.Id;
    await outside(`update incidents set title = 'Renamed outside' where id = ${id}`);
    assert.equal((await cachedList()).tickets[0]!.title, 'Renamed outside');

    await outside(`insert into incidents (org_id, livemode, title, description, status, priority, source, source_ref, lat, lng, location_name,
        assignee_id, creator_id, customer_token, sla_due_at, sla_warn_at, created_at, updated_at)
      select org_id, livemode, 'Inserted outside', null, status, priority, source, null, null, null, null,
        null, creator_id, 'outside-token', sla_due_at, sla_warn_at, created_at, updated_at from incidents where id = ${id}`);
    const l = await cachedList();
    assert.equal(l.tickets[0]!.title, 'Inserted outside');
    const inserted = l.tickets[0]!;

    await outside(`update incidents set updated_at = '2030-01-01T00:00:00.000Z' where id = ${inserted.Id}`);
    assert.equal(((await list()).tickets[0] as Ticket & { updated_at: string }).updated_at, '2030-01-01T00:00:00.000Z');
    await outside(`delete from incidents where id = ${inserted.Id}`);
    assert.deepEqual(titles(await list()), ['Renamed outside', 'First']);
  });

  test("a deleted account's assignment is cleared in a cached page (the database's SET NULL)", async () => {
    const helper = await signUp(t.app, { name: 'Helper' });
    const added = await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: helper.email } });
    assert.equal(added.statusCode, 201, added.body);
    const id = (await list()).tickets[0]!.Id;
    const assigned = await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${id}`, headers: { cookie: owner.cookie }, payload: { assignee_id: helper.id } });
    assert.equal(assigned.statusCode, 200, assigned.body);
    const assignee = async () => ((await cachedList()).tickets[0] as Ticket & { assignee_id: number | null }).assignee_id;
    assert.equal(await assignee(), helper.id);
    const gone = await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: { cookie: helper.cookie }, payload: { password: helper.password } });
    assert.equal(gone.statusCode, 200, gone.body);
    assert.equal(await assignee(), null);
  });

  if (testDialect === 'postgres')
    test('PostgreSQL bumps the version at COMMIT: a transaction that locks an incident after writing another never deadlocks with one that writes the first', async () => {
      const [a, b] = (await list()).tickets.map((i) => i.Id);
      const connect = async () => {
        const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, options: `-c search_path=${t.ctx.database.schema}` });
        await c.connect();
        return c;
      };
      const [one, two] = [await connect(), await connect()];
      try {
        const version = async () => Number((await one.query<{ v: string }>('select sum(version) as v from incident_list_versions')).rows[0]!.v);
        const before = await version();
        await one.query('begin');
        await one.query(`select id from incidents where id = ${a} for update`);
        await two.query('begin');
        await two.query(`update incidents set title = 'Written by two' where id = ${b}`);
        // Two now waits for one's row lock. Had two's update taken the version row already, one's update
        // below would wait for two: a deadlock, which PostgreSQL breaks by failing one of them.
        const twoLocks = two.query(`select id from incidents where id = ${a} for update`);
        await one.query(`update incidents set title = 'Written by one' where id = ${a}`);
        await one.query('commit');
        await twoLocks;
        await two.query('commit');
        assert.equal(await version(), before + 2);
        assert.deepEqual(titles(await list()).slice(0, 2).sort(), ['Written by one', 'Written by two']);
      } finally {
        await one.end();
        await two.end();
      }
    });

  if (testDialect === 'sqlite')
    test("SQLite's update trigger watches every column a list shows or filters on but updated_at (bumped by the code), and the report facts", async () => {
      const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'trigger' and name = 'incidents_list_version_update'`.execute(t.ctx.db);
      const watched = /after update of (.*?) on incidents/i.exec(rows[0]!.sql)![1]!.split(',').map((c) => c.trim());
      // The reports' stored answers hold while the same version stays (modules/reports, stored-results.ts; migration 0052).
      const reportFacts = ['first_acknowledged_at', 'escalated_at', 'reopened_count'];
      assert.deepEqual(watched.sort(), [...VIEW_COLUMNS.filter((c) => c !== 'updated_at'), ...reportFacts].sort());
    });

  test('a cached page changes at its next SLA transition with no write: ok, then warning, then breached', async () => {
    const l = await cachedList();
    assert.deepEqual(
      l.tickets.map((i) => i.sla_status),
      ['ok', 'ok'],
    );
    // urgent: a one-hour window, the warning from 45 minutes.
    t.clock.advance(46 * 60_000);
    assert.deepEqual(
      (await cachedList()).tickets.map((i) => i.sla_status),
      ['warning', 'warning'],
    );
    t.clock.advance(15 * 60_000);
    assert.deepEqual(
      (await cachedList()).tickets.map((i) => i.sla_status),
      ['breached', 'breached'],
    );
  });

  test('access is checked before the cache: a removed member is refused a page the cache holds', async () => {
    assert.deepEqual(titles(await cachedList(member)), titles(await list()));
    const removed = await t.app.inject({ method: 'DELETE', url: `/v1/orgs/${owner.slug}/members/${member.id}`, headers: { cookie: owner.cookie } });
    assert.equal(removed.statusCode, 200, removed.body);
    // The member's scope is now their own org alone, which has no incidents.
    assert.deepEqual(titles(await list(member)), []);
  });

  test('writes racing reads: once the writes are answered, the list holds every one of them', async () => {
    const start = (await list()).total;
    const n = 20;
    const writes = Array.from({ length: n }, (_, i) => create(owner, { title: `Raced ${i}` }));
    const reads = Array.from({ length: n }, () => list());
    await Promise.all([...writes, ...reads]);
    const l = await list(owner, 'limit=100');
    assert.equal(l.total, start + n);
    for (let i = 0; i < n; i++) assert.ok(titles(l).includes(`Raced ${i}`), `Raced ${i} listed`);
  });
});
