import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { dropTestSchema, testSchemaName, type Headers } from '../helpers.js';
import { call, clusterEnv, newUser, ok, startInstance, until, type ClusterUser, type Instance } from './instances.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

// Issue #19: each instance holds keys, sessions and memberships (and, #40, monitoring tools' integration keys, an org's dispatch settings for new incidents and its maintenance windows) in memory. Access that ends (or a
// membership that begins) on instance A reaches B's memory through the Redis bus within a second.
// The TTL is set to a minute here, so that nothing below passes because an entry simply aged out;
// the first test shows that B really serves from memory.

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const WITHIN_MS = 1_000;

describe('two instances: the credential cache of each follows changes made on the other', () => {
  let redis: RedisServer;
  let db: pg.Client;
  const schema = testSchemaName('c');
  let a: Instance;
  let b: Instance;
  let root: ClusterUser;

  before(async () => {
    redis = await startRedisServer();
    const env = clusterEnv(DATABASE_URL, schema, redis, {
      CREDENTIAL_CACHE_TTL_MS: '60000',
    });
    a = await startInstance('a', env); // the first migrates the schema
    b = await startInstance('b', env);
    db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    root = await newUser(a, b, 'Root'); // the first user: instance admin
    await db.query(`update ${schema}.users set plan = 'enterprise' where id = $1`, [root.id]);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await db?.end();
    await redis?.clean();
    await redis?.stop();
    await dropTestSchema(schema);
  });

  const statusOn = async (at: Instance, method: string, url: string, headers: Headers, payload?: unknown) => (await call(at, method, url, headers, payload)).status;
  const me = (at: Instance, headers: Headers) => statusOn(at, 'GET', '/v1/auth/me', headers);
  const listIn = (at: Instance, headers: Headers, orgId: number) => statusOn(at, 'GET', `/v1/incidents?org_id=${orgId}`, headers);
  /** B answers `status` within a second of the change on A. */
  const soonOnB = (check: () => Promise<number>, status: number, what: string) => until(async () => (await check()) === status, what, WITHIN_MS);
  const keyIdOf = async (user: ClusterUser, mode: 'live' | 'test') =>
    (await ok<{ api_keys: { id: number; mode: string }[] }>(200, a, 'GET', '/v1/api-keys', { cookie: user.cookie })).api_keys.find((k) => k.mode === mode)!.id;
  /** Adds a user to an org the way an admin does (their address proven first, so they join at once). */
  async function addTo(org: { slug: string }, user: ClusterUser, role: 'member' | 'admin') {
    const { email } = await ok<{ email: string }>(200, a, 'PATCH', `/v1/users/${user.id}`, { cookie: root.cookie }, { email_verified: true });
    await ok(201, a, 'POST', `/v1/orgs/${org.slug}/members`, { cookie: root.cookie }, { email, role });
  }
  const newOrg = (name: string) => ok<{ id: number; slug: string }>(201, a, 'POST', '/v1/orgs', { cookie: root.cookie }, { name: `${name} ${Date.now()}` });

  test('B serves a key from memory: revoked behind its back (no notice), it still works there', async () => {
    const user = await newUser(a, b, 'Mem');
    assert.equal(await me(b, user.test), 200);
    await db.query(`update ${schema}.api_keys set revoked_at = $1 where id = $2`, [new Date().toISOString(), await keyIdOf(user, 'test')]);
    assert.equal(await me(b, user.test), 200, 'B answered from memory');
    assert.equal(await me(a, user.test), 401, 'A had not read it: it reads the database');
  });

  test('a key revoked on A is refused on A at once and on B within a second', async () => {
    const user = await newUser(a, b, 'Ann');
    assert.equal(await me(a, user.live), 200);
    assert.equal(await me(b, user.live), 200);
    await ok(200, a, 'DELETE', `/v1/api-keys/${await keyIdOf(user, 'live')}`, { cookie: user.cookie });
    assert.equal(await me(a, user.live), 401);
    await soonOnB(() => me(b, user.live), 401, 'B refusing the revoked key');
    assert.equal(await me(b, user.test), 200, 'the other key stays');
  });

  test('a logout on A ends the session on B within a second', async () => {
    const user = await newUser(a, b, 'Bob');
    assert.equal(await me(b, { cookie: user.cookie }), 200);
    await ok(200, a, 'POST', '/v1/auth/logout', { cookie: user.cookie });
    assert.equal(await me(a, { cookie: user.cookie }), 401);
    await soonOnB(() => me(b, { cookie: user.cookie }), 401, 'B refusing the logged-out session');
  });

  test('a password change on A ends the other sessions on B within a second', async () => {
    const user = await newUser(a, b, 'Cat');
    const caller = { cookie: user.cookie };
    const { email } = await ok<{ email: string }>(200, b, 'GET', '/v1/auth/me', caller);
    const second = await call(a, 'POST', '/v1/auth/login', {}, { email, password: 'correct horse battery' });
    assert.equal(second.status, 200);
    const other = { cookie: second.headers.getSetCookie().find((c) => c.startsWith('muster_session='))!.split(';')[0]! };
    assert.equal(await me(b, other), 200);
    await ok(200, a, 'POST', '/v1/auth/password', caller, { current_password: 'correct horse battery', new_password: 'another horse battery' });
    await soonOnB(() => me(b, other), 401, 'B refusing the ended session');
    assert.equal(await me(b, caller), 200, 'the caller’s session stays');
  });

  test('a member added on A gains the org on B within a second, and removed loses it', async () => {
    const member = await newUser(a, b, 'Max');
    const org = await newOrg('Removal');
    assert.equal(await listIn(b, member.live, org.id), 403); // B holds the member's memberships now
    await addTo(org, member, 'member');
    await soonOnB(() => listIn(b, member.live, org.id), 200, 'B seeing the new membership');
    await ok(200, a, 'DELETE', `/v1/orgs/${org.slug}/members/${member.id}`, { cookie: root.cookie });
    assert.equal(await listIn(a, member.live, org.id), 403);
    await soonOnB(() => listIn(b, member.live, org.id), 403, 'B refusing the removed member');
  });

  test('a role changed on A holds on B at once (roles are read with the org, never from memory)', async () => {
    const admin = await newUser(a, b, 'Ada');
    const org = await newOrg('Roles');
    await addTo(org, admin, 'admin');
    const invite = (n: number) => statusOn(b, 'POST', `/v1/orgs/${org.slug}/members`, admin.live, { email: `invitee-${process.pid}-${n}@example.com`, role: 'member' });
    assert.equal(await invite(1), 201);
    await ok(200, a, 'PATCH', `/v1/orgs/${org.slug}/members/${admin.id}`, { cookie: root.cookie }, { role: 'member' });
    assert.equal(await invite(2), 403);
  });

  const meOn = (at: Instance, headers: Headers) => ok<{ name: string; plan: string }>(200, at, 'GET', '/v1/auth/me', headers);
  const beaconOn = (at: Instance, headers: Headers, orgId: number, lat: number) =>
    statusOn(at, 'POST', '/v1/signals', headers, { type: 'beacon', org_id: orgId, lat, lng: 4.89, meta: { device_id: 'phone-1' } });

  test('B serves the user row from memory: renamed behind its back (no notice), B still shows the old name', async () => {
    const user = await newUser(a, b, 'Row');
    assert.equal((await meOn(b, user.live)).name, 'Row');
    await db.query(`update ${schema}.users set name = 'Changed behind' where id = $1`, [user.id]);
    assert.equal((await meOn(b, user.live)).name, 'Row', 'B answered from memory');
  });

  test('a rename on A is seen by A at once and by B within a second', async () => {
    const user = await newUser(a, b, 'Ren');
    assert.equal((await meOn(b, user.live)).name, 'Ren');
    await ok(200, a, 'PATCH', '/v1/auth/me', user.live, { name: 'Renamed' });
    assert.equal((await meOn(a, user.live)).name, 'Renamed');
    await until(async () => (await meOn(b, user.live)).name === 'Renamed', 'B showing the new name', WITHIN_MS);
  });

  test('a plan change on A applies on B within a second: its plan, and the lock of the org it owns', async () => {
    const user = await newUser(a, b, 'Pla');
    await ok(200, a, 'PATCH', `/v1/users/${user.id}`, { cookie: root.cookie }, { plan: 'agency' });
    const org = await ok<{ id: number }>(201, a, 'POST', '/v1/orgs', { cookie: user.cookie }, { name: `Agency ${Date.now()}` });
    assert.equal(await beaconOn(b, user.live, org.id, 52.1), 201);
    assert.equal((await meOn(b, user.live)).plan, 'agency');
    await ok(200, a, 'PATCH', `/v1/users/${user.id}`, { cookie: root.cookie }, { plan: 'free' });
    await until(async () => (await meOn(b, user.live)).plan === 'free', 'B showing the new plan', WITHIN_MS);
    await soonOnB(() => beaconOn(b, user.live, org.id, 52.2), 403, 'B refusing a beacon into the org locked by the plan');
  });

  test('a user deleted on A is 401 with their key on A at once and on B within a second', async () => {
    const user = await newUser(a, b, 'Del');
    assert.equal(await me(b, user.live), 200);
    await ok(200, a, 'DELETE', '/v1/auth/me', { cookie: user.cookie }, { password: 'correct horse battery' });
    assert.equal(await me(a, user.live), 401);
    await soonOnB(() => me(b, user.live), 401, 'B refusing the deleted user’s key');
  });

  // A monitoring tool's integration key (modules/integrations/key-cache.ts): held by B after its first events.
  const integrationOf = async (user: ClusterUser, name: string) => {
    const made = await ok<{ id: number; events_url: string }>(201, a, 'POST', '/v1/integrations', user.live, { name });
    return { id: made.id, path: new URL(made.events_url).pathname };
  };
  let refs = 0;
  /** The status of one Events API trigger through `path` on `at`, and the priority of its incident (when one opened). */
  const triggerOn = async (at: Instance, path: string, user?: ClusterUser) => {
    refs += 1;
    const ref = `ref-${process.pid}-${refs}`;
    const status = (await call(at, 'POST', path, {}, { event_action: 'trigger', dedup_key: ref, payload: { summary: 'Disk full', source: 'db-1', severity: 'critical' } })).status;
    if (status !== 202 || !user) return { status };
    const list = await ok<{ tickets: { priority: string }[] }>(200, a, 'GET', `/v1/tickets?source_ref=${ref}`, user.live);
    return { status, priority: list.tickets[0]?.priority };
  };
  /** B's first events read the key, then the org's integrations; from the third on B answers from memory. */
  const warm = async (path: string) => {
    for (let n = 0; n < 3; n += 1) assert.equal((await triggerOn(b, path)).status, 202);
  };

  test('B serves an integration key from memory: revoked behind its back (no notice), it still works there', async () => {
    const user = await newUser(a, b, 'Hook');
    const i = await integrationOf(user, 'Behind');
    await warm(i.path);
    await db.query(`update ${schema}.integrations set revoked_at = $1 where id = $2`, [new Date().toISOString(), i.id]);
    assert.equal((await triggerOn(b, i.path)).status, 202, 'B answered from memory');
    assert.equal((await triggerOn(a, i.path)).status, 401, 'A had not read it: it reads the database');
  });

  test('an integration changed on A holds on B within a second, and revoked on A is refused on B within a second', async () => {
    const user = await newUser(a, b, 'Tool');
    const i = await integrationOf(user, 'Alerts');
    await warm(i.path);
    assert.equal((await triggerOn(b, i.path, user)).priority, 'urgent');
    await ok(200, a, 'PATCH', `/v1/integrations/${i.id}`, user.live, { priority_map: { critical: 'low' } });
    await until(async () => (await triggerOn(b, i.path, user)).priority === 'low', 'B using the new priority map', WITHIN_MS);
    await ok(200, a, 'DELETE', `/v1/integrations/${i.id}`, user.live);
    assert.equal((await triggerOn(a, i.path)).status, 401);
    await soonOnB(async () => (await triggerOn(b, i.path)).status, 401, 'B refusing the revoked integration key');
  });

  test('the dispatch settings a new incident takes: B holds them (a change behind its back is not seen), a change on A holds on B within a second', async () => {
    const user = await newUser(a, b, 'Disp');
    const { orgs } = await ok<{ orgs: { id: number; slug: string }[] }>(200, a, 'GET', '/v1/orgs', user.live);
    const slug = orgs.find((o) => o.id === user.org)!.slug;
    const create = async () => (await ok<{ Id: number }>(201, b, 'POST', '/v1/tickets', user.live, { title: 'Leak', org_id: user.org, priority: 'urgent' })).Id;
    const minutes = async (id: number) => {
      const r = (await db.query<{ created_at: string; escalate_at: string }>(`select created_at, escalate_at from ${schema}.incidents where id = $1`, [id])).rows[0]!;
      return (Date.parse(r.escalate_at) - Date.parse(r.created_at)) / 60_000;
    };
    assert.equal(await minutes(await create()), 5, 'the default urgent timeout');
    await db.query(`insert into ${schema}.dispatch_settings (org_id, ack_urgent_minutes, ack_high_minutes, updated_at) values ($1, 9, 15, $2)`, [user.org, new Date().toISOString()]);
    assert.equal(await minutes(await create()), 5, 'B answered from memory');
    await ok(200, a, 'PATCH', `/v1/orgs/${slug}/dispatch`, user.live, { ack_timeout_minutes: { urgent: 3 } });
    await until(async () => (await minutes(await create())) === 3, 'B taking the timeout changed on A', WITHIN_MS);
  });

  test('maintenance windows: B holds the org’s (one written behind its back is not seen); one planned, then ended, on A holds on B within a second', async () => {
    const user = await newUser(a, b, 'Maint');
    const { orgs } = await ok<{ orgs: { id: number; slug: string }[] }>(200, a, 'GET', '/v1/orgs', user.live);
    const windows = `/v1/orgs/${orgs.find((o) => o.id === user.org)!.slug}/maintenance-windows`;
    const i = await integrationOf(user, 'Planned');
    await warm(i.path);
    const opensOnB = async () => (await triggerOn(b, i.path, user)).priority !== undefined;
    const hour = (from: number) => [new Date(from).toISOString(), new Date(from + 3_600_000).toISOString()];
    const [start, end] = hour(Date.now() - 60_000);
    await db.query(`insert into ${schema}.maintenance_windows (org_id, livemode, starts_at, ends_at, created_at, updated_at) values ($1, 1, $2, $3, $2, $2)`, [user.org, start, end]);
    assert.equal(await opensOnB(), true, 'B answered from memory');
    await db.query(`delete from ${schema}.maintenance_windows where org_id = $1`, [user.org]);
    const [from, to] = hour(Date.now());
    const planned = await ok<{ id: number }>(201, a, 'POST', windows, user.live, { start: from, end: to });
    await until(async () => !(await opensOnB()), 'B suppressing during the window planned on A', WITHIN_MS);
    await ok(200, a, 'DELETE', `${windows}/${planned.id}`, user.live);
    await until(opensOnB, 'B opening again once the window ended on A', WITHIN_MS);
  });

  test('while Redis is away B serves nothing from memory, and after it returns notices flow again', async () => {
    const user = await newUser(a, b, 'Dot');
    assert.equal(await me(b, user.test), 200);
    await db.query(`update ${schema}.api_keys set revoked_at = $1 where id = $2`, [new Date().toISOString(), await keyIdOf(user, 'test')]);
    assert.equal(await me(b, user.test), 200, 'from memory while B hears the notices');
    const i = await integrationOf(user, 'Away');
    await warm(i.path);
    await db.query(`update ${schema}.integrations set revoked_at = $1 where id = $2`, [new Date().toISOString(), i.id]);
    assert.equal((await triggerOn(b, i.path)).status, 202, 'the integration key from memory too');
    await redis.stop();
    try {
      // As soon as B sees its subscriber connection gone it may have missed a notice: it reads.
      await until(async () => (await me(b, user.test)) === 401, 'B reading the database while Redis is away', 5_000);
      assert.equal(await me(b, user.live), 200);
      assert.equal((await triggerOn(b, i.path)).status, 401, 'nor the integration key: read from the database');
    } finally {
      await redis.start();
    }
    // Back: B hears notices again (or, until its subscriber is back, reads the database).
    // Both ends of the notice: A publishes it, B hears it (each reconnects on its own backoff; under load A may be last).
    for (const [name, instance] of [['A', a], ['B', b]] as const)
      await until(async () => (await call<{ redis?: string }>(instance, 'GET', '/readyz')).body.redis === 'ok', `${name} reconnecting to Redis`, 10_000);
    assert.equal(await me(b, user.live), 200);
    await ok(200, a, 'DELETE', `/v1/api-keys/${await keyIdOf(user, 'live')}`, { cookie: user.cookie });
    await soonOnB(() => me(b, user.live), 401, 'B refusing a key revoked on A after Redis returned');
  });
});
