import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, injector, testDialect, type TestApp, type Headers } from './helpers.js';
import { createKey, emailedCode, setPlan, signUp, type TestUser } from './factories.js';

// Issue #19: GET /v1/auth/me and every beacon (POST /v1/signals, tracker fixes) read the user's
// row and their org access from memory (the credential cache). Each writer of the users table,
// and each change of a plan, applies on the very next request of this instance (the other
// instance: test/cluster/credential-cache.test.ts). The TTL is a minute, so that nothing passes
// because an entry aged out. Queries are counted through onQuery.

describe(`user rows and org access in memory (${testDialect})`, () => {
  let t: TestApp;
  let root: TestUser;
  const queries: string[] = [];

  before(async () => {
    t = await buildTestApp({ CREDENTIAL_CACHE_TTL_MS: '60000' }, { onQuery: (sql) => queries.push(sql) });
    root = await signUp(t.app); // the first user: instance admin
    await setPlan(t.app, root.cookie, root.id, 'enterprise');
  });
  after(() => t.close());

  const { send, ok } = injector(() => t.app);
  async function readsOf(tables: string[], run: () => Promise<unknown>): Promise<string[]> {
    queries.length = 0;
    await run();
    return queries.filter((q) => tables.some((table) => new RegExp(`\\b(from|join) "${table}"`, 'i').test(q)));
  }
  const me = (headers: Headers) => ok<{ name: string; plan: string; email_verified: boolean }>('GET', '/v1/auth/me', headers);
  const beacon = (headers: Headers, extra: Record<string, unknown> = {}) =>
    send('POST', '/v1/signals', headers, { type: 'beacon', lat: 52.37, lng: 4.89, meta: { device_id: 'phone-1' }, ...extra });
  async function keyed(fields: { verified?: boolean } = {}): Promise<{ user: TestUser; key: Headers }> {
    const user = await signUp(t.app, fields);
    return { user, key: { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key } };
  }

  test('the second GET /v1/auth/me and the second beacon read no user, org or membership', async () => {
    const { key } = await keyed();
    await me(key);
    assert.deepEqual(await readsOf(['users', 'orgs', 'memberships', 'api_keys'], () => me(key)), []);
    assert.equal((await beacon(key)).statusCode, 201);
    assert.deepEqual(await readsOf(['users', 'orgs', 'memberships', 'api_keys'], () => beacon(key, { lat: 52.38 })), []);
  });

  test('the second OsmAnd fix of a device reads no device, user, org or membership', async () => {
    const { key } = await keyed();
    const { token } = await ok<{ token: string }>('POST', '/v1/devices', key, { name: 'tracker' });
    const fix = (lat: number) => send('GET', `/v1/trackers/osmand?id=${token}&lat=${lat}&lon=4.89`, {});
    assert.equal((await fix(52.1)).statusCode, 200);
    assert.deepEqual(await readsOf(['devices', 'users', 'orgs', 'memberships'], async () => assert.equal((await fix(52.2)).statusCode, 200)), []);
  });

  test('a rename (PATCH /v1/auth/me) is seen by the next GET /v1/auth/me and the next beacon', async () => {
    const { key } = await keyed();
    const names: unknown[] = [];
    const stop = t.ctx.events.bus.subscribe((e) => {
      if (e.type === 'signal.beacon') names.push((e.payload as { user_name: string }).user_name);
    });
    try {
      await me(key);
      assert.equal((await beacon(key)).statusCode, 201);
      await ok('PATCH', '/v1/auth/me', key, { name: 'Renamed Person' });
      assert.equal((await me(key)).name, 'Renamed Person');
      assert.equal((await beacon(key, { lat: 52.4 })).statusCode, 201);
      assert.equal(names.at(-1), 'Renamed Person');
    } finally {
      stop();
    }
  });

  test('a plan change by an admin (PATCH /v1/users/:id) is seen at once, and its lock applies to the next beacon', async () => {
    const { user, key } = await keyed();
    await setPlan(t.app, root.cookie, user.id, 'agency');
    assert.equal((await me(key)).plan, 'agency');
    const org = await ok<{ id: number }>('POST', '/v1/orgs', { cookie: user.cookie }, { name: `Agency ${Math.random().toString(36).slice(2, 8)}` });
    assert.equal((await beacon(key, { org_id: org.id })).statusCode, 201);
    await setPlan(t.app, root.cookie, user.id, 'free'); // the org is over the free plan's limit: locked
    assert.equal((await me(key)).plan, 'free');
    const refused = await beacon(key, { org_id: org.id, lat: 52.5 });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json<{ code: string }>().code, 'resource_locked');
    await setPlan(t.app, root.cookie, user.id, 'agency');
    assert.equal((await beacon(key, { org_id: org.id, lat: 52.6 })).statusCode, 201);
  });

  test('an address proven with its emailed code, or withdrawn by an admin, is seen at once', async () => {
    const { user, key } = await keyed({ verified: false });
    assert.equal((await me(key)).email_verified, false);
    const code = await emailedCode(t.app, user.email, 'auth.verify_email');
    await ok('POST', '/v1/auth/verify-email', {}, { email: user.email, code });
    assert.equal((await me(key)).email_verified, true);
    await ok('PATCH', `/v1/users/${user.id}`, { cookie: root.cookie }, { email_verified: false });
    assert.equal((await me(key)).email_verified, false);
  });

  test('a deleted user (DELETE /v1/auth/me) is 401 at once with their key', async () => {
    const { user, key } = await keyed();
    await me(key);
    assert.equal((await beacon(key)).statusCode, 201);
    await ok('DELETE', '/v1/auth/me', { cookie: user.cookie }, { password: user.password });
    assert.equal((await send('GET', '/v1/auth/me', key)).statusCode, 401);
    assert.equal((await beacon(key, { lat: 52.7 })).statusCode, 401);
  });

  test('a member removed from an org cannot post a beacon into it on the next request', async () => {
    const { user, key } = await keyed();
    const org = await ok<{ id: number; slug: string }>('POST', '/v1/orgs', { cookie: root.cookie }, { name: `Team ${Math.random().toString(36).slice(2, 8)}` });
    await ok('PATCH', `/v1/users/${user.id}`, { cookie: root.cookie }, { email_verified: true });
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: root.cookie }, { email: user.email, role: 'member' });
    assert.equal((await beacon(key, { org_id: org.id })).statusCode, 201);
    await ok('DELETE', `/v1/orgs/${org.slug}/members/${user.id}`, { cookie: root.cookie });
    assert.equal((await beacon(key, { org_id: org.id, lat: 52.8 })).statusCode, 403);
  });
});
