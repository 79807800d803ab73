import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { iso } from '../src/lib/clock.js';
import { credentialCache } from '../src/modules/users/credential-cache.js';
import { buildTestApp, injector, testDialect, type TestApp, type Headers } from './helpers.js';
import { createKey, emailedCode, login, setPlan, signUp, uniqueEmail, type TestUser } from './factories.js';

// Issue #19: API keys, sessions and memberships are served from memory, and every change that
// ends or alters access takes effect on the very next request of this instance (the other
// instance: test/cluster/credential-cache.test.ts). Queries are counted through onQuery.

const TTL_MS = 5_000;
/** Small, so that the bound on unknown keys (a tenth) is met by a few requests. */
const SIZE = 100;

describe(`credential cache on the request path (${testDialect})`, () => {
  let t: TestApp;
  let root: TestUser;
  const queries: string[] = [];

  before(async () => {
    t = await buildTestApp({ CREDENTIAL_CACHE_TTL_MS: String(TTL_MS), CREDENTIAL_CACHE_SIZE: String(SIZE) }, { onQuery: (sql) => queries.push(sql) });
    root = await signUp(t.app); // the first user: instance admin
    await setPlan(t.app, root.cookie, root.id, 'enterprise');
  });
  after(() => t.close());

  const { send, ok } = injector(() => t.app);
  const status = async (method: string, url: string, headers: Headers, payload?: Record<string, unknown>) => (await send(method, url, headers, payload)).statusCode;
  /** The queries a request makes on these tables. */
  async function readsOf(tables: string[], run: () => Promise<unknown>): Promise<string[]> {
    queries.length = 0;
    await run();
    return queries.filter((q) => tables.some((table) => new RegExp(`\\b(from|join) "${table}"`, 'i').test(q)));
  }
  const newOrg = (name: string) => ok<{ id: number; slug: string }>('POST', '/v1/orgs', { cookie: root.cookie }, { name: `${name} ${Math.random().toString(36).slice(2, 8)}` });
  const listIn = (headers: Headers, orgId: number) => status('GET', `/v1/incidents?org_id=${orgId}`, headers);

  test('the second request of a key or a session reads no credential, and a second list reads no membership', async () => {
    const user = await signUp(t.app);
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    const cookie = { cookie: await login(t.app, user.email, user.password) }; // a session nothing has read yet
    for (const headers of [key, cookie]) {
      const first = await readsOf(['api_keys', 'sessions'], () => ok('GET', '/v1/auth/me', headers));
      assert.equal(first.length, 1, `the first request reads its credential: ${first.join('; ')}`);
      assert.deepEqual(await readsOf(['api_keys', 'sessions'], () => ok('GET', '/v1/auth/me', headers)), []);
    }
    assert.equal((await readsOf(['memberships'], () => ok('GET', '/v1/incidents', key))).length, 1);
    assert.deepEqual(await readsOf(['api_keys', 'sessions', 'memberships'], () => ok('GET', '/v1/incidents', key)), []);
    assert.deepEqual(await readsOf(['api_keys', 'sessions', 'memberships'], () => ok('GET', '/v1/signals', key)), []);
  });

  test('a revoked key is refused by the next request; the user’s other key is still served from memory', async () => {
    const user = await signUp(t.app);
    const [revoked, kept] = [await createKey(t.app, user.cookie, 'live'), await createKey(t.app, user.cookie, 'live')];
    await ok('GET', '/v1/auth/me', { 'x-api-key': revoked.key });
    await ok('GET', '/v1/auth/me', { 'x-api-key': kept.key });
    await ok('DELETE', `/v1/api-keys/${revoked.id}`, { cookie: user.cookie });
    assert.equal(await status('GET', '/v1/auth/me', { 'x-api-key': revoked.key }), 401);
    assert.deepEqual(await readsOf(['api_keys'], () => ok('GET', '/v1/auth/me', { 'x-api-key': kept.key })), []);
  });

  test('a logout is refused by the next request of its cookie', async () => {
    const user = await signUp(t.app);
    const other = await login(t.app, user.email, user.password);
    await ok('GET', '/v1/auth/me', { cookie: user.cookie });
    await ok('GET', '/v1/auth/me', { cookie: other });
    await ok('POST', '/v1/auth/logout', { cookie: user.cookie });
    assert.equal(await status('GET', '/v1/auth/me', { cookie: user.cookie }), 401);
    assert.equal(await status('GET', '/v1/auth/me', { cookie: other }), 200);
  });

  test('a password change ends the other sessions at once, keeps the caller’s and the keys', async () => {
    const user = await signUp(t.app);
    const other = await login(t.app, user.email, user.password);
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    for (const headers of [{ cookie: user.cookie }, { cookie: other }, key]) await ok('GET', '/v1/auth/me', headers);
    await ok('POST', '/v1/auth/password', { cookie: user.cookie }, { current_password: user.password, new_password: 'another horse battery' });
    assert.equal(await status('GET', '/v1/auth/me', { cookie: other }), 401);
    assert.equal(await status('GET', '/v1/auth/me', { cookie: user.cookie }), 200);
    assert.equal(await status('GET', '/v1/auth/me', key), 200);
  });

  test('a password reset ends every session at once', async () => {
    const user = await signUp(t.app);
    await ok('GET', '/v1/auth/me', { cookie: user.cookie });
    await ok('POST', '/v1/auth/password-reset', {}, { email: user.email });
    const code = await emailedCode(t.app, user.email, 'auth.password_reset');
    await ok('POST', '/v1/auth/password-reset/verify', {}, { email: user.email, code, new_password: 'another horse battery' });
    assert.equal(await status('GET', '/v1/auth/me', { cookie: user.cookie }), 401);
  });

  test('a removed member is refused the org by the next request, and their lists stop including it', async () => {
    const user = await signUp(t.app);
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    const org = await newOrg('Removal');
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: root.cookie }, { email: user.email, role: 'member' });
    const incident = await ok<{ Id: number }>('POST', '/v1/incidents', { cookie: root.cookie }, { title: 'shared', org_id: org.id });
    const visible = async () => (await ok<{ tickets: { Id: number }[] }>('GET', '/v1/incidents', key)).tickets.some((i) => i.Id === incident.Id);
    assert.equal(await listIn(key, org.id), 200);
    assert.ok(await visible());
    await ok('DELETE', `/v1/orgs/${org.slug}/members/${user.id}`, { cookie: root.cookie });
    assert.equal(await listIn(key, org.id), 403);
    assert.ok(!(await visible()));
  });

  test('a role change takes effect on the next request', async () => {
    const user = await signUp(t.app);
    const org = await newOrg('Roles');
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: root.cookie }, { email: user.email, role: 'admin' });
    const invite = () => status('POST', `/v1/orgs/${org.slug}/members`, { cookie: user.cookie }, { email: uniqueEmail('invitee'), role: 'member' });
    assert.equal(await invite(), 201);
    assert.equal(await listIn({ cookie: user.cookie }, org.id), 200);
    await ok('PATCH', `/v1/orgs/${org.slug}/members/${user.id}`, { cookie: root.cookie }, { role: 'member' });
    assert.equal(await invite(), 403);
    assert.equal(await listIn({ cookie: user.cookie }, org.id), 200, 'still a member');
  });

  test('a member added is seen by the next request', async () => {
    const user = await signUp(t.app);
    const headers = { cookie: user.cookie };
    const org = await newOrg('Added');
    assert.equal(await listIn(headers, org.id), 403); // the user's memberships are now in memory
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: root.cookie }, { email: user.email, role: 'member' });
    assert.equal(await listIn(headers, org.id), 200);
  });

  test('an invite accepted through its link is seen by the next request', async () => {
    const user = await signUp(t.app, { verified: false });
    const headers = { cookie: user.cookie };
    const org = await newOrg('Invited');
    assert.equal(await listIn(headers, org.id), 403);
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: root.cookie }, { email: user.email, role: 'member' });
    const row = await t.ctx.db.selectFrom('outbox').select('payload').where('recipient', '=', user.email).where('topic', '=', 'org.invite').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const token = /\/invites\/([A-Za-z0-9_-]+)/.exec(row.payload)?.[1];
    assert.ok(token, 'the invite email carries its link');
    assert.equal(await listIn(headers, org.id), 403);
    await ok('POST', `/v1/invites/${token}/accept`, headers);
    assert.equal(await listIn(headers, org.id), 200);
  });

  test('a new org is in its creator’s scope on the next request', async () => {
    const user = await signUp(t.app);
    const headers = { cookie: user.cookie };
    await setPlan(t.app, root.cookie, user.id, 'enterprise');
    await ok('GET', '/v1/incidents', headers); // the user's memberships are now in memory
    const org = await ok<{ id: number }>('POST', '/v1/orgs', headers, { name: 'Own org' });
    assert.equal(await listIn(headers, org.id), 200);
  });

  test('a deleted org leaves its members’ scope at once', async () => {
    const user = await signUp(t.app);
    const org = await newOrg('Deleted');
    await ok('POST', `/v1/orgs/${org.slug}/members`, { cookie: root.cookie }, { email: user.email, role: 'member' });
    assert.equal(await listIn({ cookie: user.cookie }, org.id), 200);
    await ok('DELETE', `/v1/orgs/${org.slug}`, { cookie: root.cookie });
    assert.equal(await listIn({ cookie: user.cookie }, org.id), 403);
  });

  test('a change no notice announced (a lost one) serves at most the TTL', async () => {
    const user = await signUp(t.app);
    const created = await createKey(t.app, user.cookie, 'live');
    const key = { 'x-api-key': created.key };
    await ok('GET', '/v1/auth/me', key);
    // Revoked behind the cache's back: no notice, as if it was lost on its way from another instance.
    await t.ctx.db.updateTable('api_keys').set({ revoked_at: iso(t.clock.now()) }).where('id', '=', created.id).execute();
    assert.equal(await status('GET', '/v1/auth/me', key), 200, 'served from memory');
    t.clock.advance(TTL_MS - 1);
    assert.equal(await status('GET', '/v1/auth/me', key), 200);
    t.clock.advance(1);
    assert.equal(await status('GET', '/v1/auth/me', key), 401, 'read again once the TTL is over');
  });

  test('an unknown key is refused, and memory for unknown keys stays bounded', async () => {
    const cache = credentialCache(t.ctx);
    for (let i = 0; i < 50; i++) {
      const res = await send('GET', '/v1/auth/me', { 'x-api-key': `sk_live_${String(i).padStart(43, 'x')}` });
      assert.equal(res.statusCode, 401);
    }
    assert.equal(cache.sizes().unknown, SIZE / 10);
  });
});
