import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, injector, testDialect, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, setPlan, signUp, type TestUser } from '../../../test/factories.js';
import { findIncident, updateIncident } from './incidents.repository.js';

// Issue #19, POST /v1/tickets: the org check comes from the credential cache (targetOrgWrite) and
// the creator's name and phone from the user cache, so a creation reads no org, membership or user
// row once they are held. Every change that decides a creation's answer applies to the very next
// creation of this instance (the TTL is a minute, so nothing passes because an entry aged out).

describe(`incident creation from the caches (${testDialect})`, () => {
  let t: TestApp;
  let root: TestUser;
  const queries: string[] = [];
  const parameters: (readonly unknown[])[] = [];
  /** Per statement: it travelled in the round trip of the one after it (PostgreSQL, db/pipeline.ts). */
  const withNext: boolean[] = [];
  const clear = () => {
    queries.length = 0;
    parameters.length = 0;
    withNext.length = 0;
  };

  before(async () => {
    t = await buildTestApp({ CREDENTIAL_CACHE_TTL_MS: '60000' }, {
      onQuery: (sql, params, _ms, next) => {
        queries.push(sql);
        parameters.push(params);
        withNext.push(next);
      },
    });
    root = await signUp(t.app);
    await setPlan(t.app, root.cookie, root.id, 'enterprise');
  });
  after(() => t.close());

  const { send, ok } = injector(() => t.app);
  const create = (headers: Headers, payload: Record<string, unknown> = {}) => send('POST', '/v1/tickets', headers, { title: 'Pipe burst', priority: 'high', ...payload });
  async function keyed(): Promise<{ user: TestUser; key: Headers }> {
    const user = await signUp(t.app, { name: 'Creator' });
    return { user, key: { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key } };
  }
  const uniqueName = (prefix: string) => `${prefix} ${Math.random().toString(36).slice(2, 8)}`;
  async function phoneAlertsOf(incidentId: number) {
    const rows = await t.ctx.db.selectFrom('outbox').select(['kind', 'recipient', 'status', 'payload']).where('topic', '=', 'incident.created').where('kind', '=', 'phone').execute();
    return rows.filter((r) => (JSON.parse(r.payload) as { incident_id: number }).incident_id === incidentId);
  }

  test('the second creation reads no org, membership, user or key row', async () => {
    const { key } = await keyed();
    assert.equal((await create(key)).statusCode, 201);
    clear();
    const res = await create(key, { title: 'Second' });
    assert.equal(res.statusCode, 201);
    // A creator with a phone number has their row locked on PostgreSQL for the phone cap (db/locks.ts): a lock, not a read of it.
    const reads = queries.filter((q) => /\b(from|join) "(orgs|memberships|users|api_keys)"/i.test(q) && !/ for no key update$/i.test(q));
    assert.deepEqual(reads, []);
    const incident = res.json<{ Id: number; title: string; priority: string }>();
    assert.deepEqual([incident.title, incident.priority], ['Second', 'high']);
    const timeline = await ok<{ events: { type: string; actor: { user_name: string } | null }[] }>('GET', `/v1/incidents/${incident.Id}/timeline`, key);
    assert.deepEqual(
      timeline.events.map((e) => [e.type, e.actor?.user_name]),
      [['created', 'Creator']],
      'the creator\'s name comes from the cached row',
    );
  });

  test('a plan change locks the org for the very next creation, and unlocks it again', async () => {
    const { user, key } = await keyed();
    await setPlan(t.app, root.cookie, user.id, 'agency');
    const org = await ok<{ id: number }>('POST', '/v1/orgs', { cookie: user.cookie }, { name: uniqueName('Agency') });
    assert.equal((await create(key, { org_id: org.id })).statusCode, 201);
    await setPlan(t.app, root.cookie, user.id, 'free'); // over the free plan's org limit: locked
    const refused = await create(key, { org_id: org.id });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json<{ code: string }>().code, 'resource_locked');
    await setPlan(t.app, root.cookie, user.id, 'agency');
    assert.equal((await create(key, { org_id: org.id })).statusCode, 201);
  });

  test('a member removed from an org cannot create in it on the next request; a stranger never could', async () => {
    const { user, key } = await keyed();
    const org = await ok<{ id: number; slug: string }>('POST', '/v1/orgs', { cookie: root.cookie }, { name: uniqueName('Team') });
    await ok('PATCH', `/v1/users/${user.id}`, { cookie: root.cookie }, { email_verified: true });
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: root.cookie }, { email: user.email, role: 'member' });
    assert.equal((await create(key, { org_id: org.id })).statusCode, 201);
    await ok('DELETE', `/v1/orgs/${org.slug}/members/${user.id}`, { cookie: root.cookie });
    assert.equal((await create(key, { org_id: org.id })).statusCode, 403);
    const stranger = await keyed();
    assert.equal((await create(stranger.key, { org_id: org.id })).statusCode, 403);
  });

  test('a billing hand-over applies the new owner\'s plan to the next creation of every member', async () => {
    const founder = await signUp(t.app, { name: 'Founder' });
    await setPlan(t.app, root.cookie, founder.id, 'enterprise');
    const heir = await signUp(t.app, { name: 'Heir' }); // free plan: no org of theirs is writable
    const { user: worker, key } = await keyed();
    for (const u of [heir, worker]) await ok('PATCH', `/v1/users/${u.id}`, { cookie: root.cookie }, { email_verified: true });
    const org = await ok<{ id: number; slug: string }>('POST', '/v1/orgs', { cookie: founder.cookie }, { name: uniqueName('Handed') });
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: founder.cookie }, { email: heir.email, role: 'owner' });
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: founder.cookie }, { email: worker.email, role: 'member' });
    assert.equal((await create(key, { org_id: org.id })).statusCode, 201); // the worker's write access is held
    // The founder steps down: the heir, on the free plan, is the billing owner now.
    await ok('PATCH', `/v1/orgs/${org.slug}/members/${founder.id}`, { cookie: founder.cookie }, { role: 'member' });
    const refused = await create(key, { org_id: org.id });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json<{ code: string }>().code, 'resource_locked');
  });

  test('a new phone number (PATCH /v1/auth/me) gets the phone alert of the very next creation', async () => {
    const { key } = await keyed();
    const first = (await create(key)).json<{ Id: number }>();
    assert.deepEqual((await phoneAlertsOf(first.Id)).map((a) => a.status), ['skipped'], 'no phone number yet');
    await ok('PATCH', '/v1/auth/me', key, { phone: '+31612345678' });
    const second = (await create(key)).json<{ Id: number }>();
    assert.deepEqual((await phoneAlertsOf(second.Id)).map((a) => [a.recipient, a.status]), [['+31612345678', 'pending']]);
  });

  // On PostgreSQL the creations run side by side on their own connections: the race of a lock with writes.
  test('creations racing a plan downgrade: none is accepted once the downgrade is answered', async () => {
    const { user, key } = await keyed();
    await setPlan(t.app, root.cookie, user.id, 'agency');
    const org = await ok<{ id: number }>('POST', '/v1/orgs', { cookie: user.cookie }, { name: uniqueName('Racing') });
    assert.equal((await create(key, { org_id: org.id })).statusCode, 201); // the org's write access is held
    const racing = Array.from({ length: 10 }, (_, i) => create(key, { org_id: org.id, title: `racing ${i}` }));
    await setPlan(t.app, root.cookie, user.id, 'free');
    const after = await Promise.all(Array.from({ length: 5 }, (_, i) => create(key, { org_id: org.id, title: `after ${i}` })));
    for (const res of after) {
      assert.equal(res.statusCode, 403);
      assert.equal(res.json<{ code: string }>().code, 'resource_locked');
    }
    for (const res of await Promise.all(racing)) assert.ok([201, 403].includes(res.statusCode), res.body);
  });

  // Issue #40: what concurrent creations of one org and one creator queue behind on PostgreSQL.
  const commits = (q: string) => q === 'commit';
  const countsWrite = (q: string) => /^insert into "incident_counts"/.test(q);
  const userLock = (q: string) => /from "users" .*for no key update$/is.test(q);

  test("the org's incident counter is written as the creation's last statement on PostgreSQL, its lock held for the commit alone", async () => {
    const { key } = await keyed();
    assert.equal((await create(key)).statusCode, 201); // the org's settings and subscriptions in their caches, as in service
    clear();
    assert.equal((await create(key)).statusCode, 201);
    const insert = queries.findIndex((q) => /^insert into "incidents"/.test(q));
    assert.ok(insert >= 0, queries.join('\n'));
    if (testDialect === 'postgres') {
      assert.ok(commits(queries.at(-1)!) && countsWrite(queries.at(-2)!), `the counter last, then the COMMIT:\n${queries.join('\n')}`);
      assert.equal(withNext.at(-2), true, 'the counter travels in the round trip of the COMMIT');
      const outbox = queries.findIndex((q) => /^insert into "outbox"/.test(q));
      assert.ok(outbox > insert && withNext[outbox], `the deliveries travel with the next statement:\n${queries.join('\n')}`);
      const begin = queries.lastIndexOf('begin', insert);
      assert.ok(begin >= 0 && withNext[begin], 'the BEGIN travels with the first statement');
      const trips = withNext.slice(begin, queries.length).filter((next) => !next).length;
      assert.equal(trips, 3, `three round trips: the incident, its timeline event, the COMMIT:\n${queries.slice(begin).join('\n')}`);
      assert.equal(queries.filter(countsWrite).length, 1);
      assert.equal(queries.filter(commits).length, 1);
    } else {
      // SQLite's one writer holds every row anyway: written with the insert.
      assert.ok(countsWrite(queries[insert + 1]!), queries.join('\n'));
    }
  });

  test('a resolve and a reopen move two counter rows, in one order on PostgreSQL whatever the change', async () => {
    const { key } = await keyed();
    const { Id } = (await create(key)).json<{ Id: number }>();
    /** The statuses of the counter rows the change wrote, in order, and whether they came last (then COMMIT). */
    const moves = async (status: string) => {
      clear();
      const res = await send('PATCH', `/v1/tickets/${Id}`, key, { status });
      assert.equal(res.statusCode, 200, res.body);
      const at = queries.flatMap((q, i) => (countsWrite(q) ? [i] : []));
      const commit = queries.findLastIndex(commits);
      const last = at.length > 0 && at.at(-1) === commit - 1 && at[0] === commit - at.length;
      // On PostgreSQL they travel with the COMMIT (db/pipeline.ts), each a statement of its own in its round trip.
      return { statuses: at.map((i) => parameters[i]![2]), last: testDialect === 'postgres' ? last && at.every((i) => withNext[i]) : last };
    };
    const resolving = await moves('resolved');
    const reopening = await moves('open');
    if (testDialect === 'postgres') {
      // Code order would be (before, after): open then resolved, and resolved then open: two such changes could wait for each other crosswise.
      assert.deepEqual([resolving, reopening], [
        { statuses: ['open', 'resolved'], last: true },
        { statuses: ['open', 'resolved'], last: true },
      ]);
    } else {
      assert.deepEqual([resolving.statuses, reopening.statuses], [['open', 'resolved'], ['resolved', 'open']], 'SQLite: as the change goes');
    }
  });

  test('moves of one transaction are summed per counter row on PostgreSQL: resolved and reopened in one, the counters untouched', async () => {
    const { key } = await keyed();
    const { Id } = (await create(key)).json<{ Id: number }>();
    const scope = { orgIds: [(await t.ctx.db.selectFrom('incidents').select('org_id').where('id', '=', Id).executeTakeFirstOrThrow()).org_id], mode: 'live' as const };
    clear();
    await t.ctx.transaction(async (tx) => {
      const open = (await findIncident(tx.db, scope, Id))!;
      const resolved = await updateIncident(tx.db, open, { status: 'resolved' });
      await updateIncident(tx.db, resolved, { status: 'open' });
    });
    // SQLite writes each move as it comes (four); PostgreSQL sums them: -1 +1 on each row, nothing to write.
    assert.equal(queries.filter(countsWrite).length, testDialect === 'postgres' ? 0 : 4);
  });

  test("a creator without a phone number takes no lock of their row; with one, the phone cap's lock (PostgreSQL)", async () => {
    const { key } = await keyed();
    clear();
    assert.equal((await create(key)).statusCode, 201);
    assert.deepEqual(queries.filter(userLock), [], 'nothing to count: no lock');
    await ok('PATCH', '/v1/auth/me', key, { phone: '+31612345679' });
    clear();
    assert.equal((await create(key)).statusCode, 201);
    assert.equal(queries.filter(userLock).length, testDialect === 'postgres' ? 1 : 0);
  });
});
