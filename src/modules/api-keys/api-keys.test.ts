import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../../lib/crypto.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';

describe('API keys', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => {
    t = await buildTestApp();
    owner = await signUp(t.app);
  });
  after(() => t.close());

  const me = (headers: Record<string, string>) => t.app.inject({ url: '/v1/auth/me', headers });
  const list = (headers: Record<string, string>) => t.app.inject({ url: '/v1/api-keys', headers });
  const revoke = (id: number, headers: Record<string, string>) => t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${id}`, headers });

  test('creates sk_live_ and sk_test_ keys with 32 random bytes, shown once', async () => {
    for (const mode of ['live', 'test'] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: { cookie: owner.cookie }, payload: { name: 'ci', mode } });
      assert.equal(res.statusCode, 201);
      const k = body<{ key: string; mode: string; livemode: boolean; redacted: string; name: string }>(res);
      assert.match(k.key, new RegExp(`^sk_${mode}_[A-Za-z0-9_-]{43}$`));
      assert.equal(Buffer.from(k.key.slice(8), 'base64url').length, 32);
      assert.equal(k.mode, mode);
      assert.equal(k.livemode, mode === 'live');
      assert.equal(k.redacted, `sk_${mode}_...${k.key.slice(-4)}`);
      const listed = await list({ cookie: owner.cookie });
      assert.equal(listed.body.includes(k.key), false, 'the secret is never listed');
    }
  });

  test('stores only the SHA-256 of the secret', async () => {
    const { id, key } = await createKey(t.app, owner.cookie, 'live');
    const row = await t.ctx.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.key_hash, sha256(key));
    assert.equal(JSON.stringify(row).includes(key), false);
  });

  test('authenticates with x-api-key and with Authorization: Bearer; the mode follows the prefix', async () => {
    const live = await createKey(t.app, owner.cookie, 'live');
    const testKey = await createKey(t.app, owner.cookie, 'test');
    for (const headers of [{ 'x-api-key': live.key }, { authorization: `Bearer ${live.key}` }] as Record<string, string>[]) {
      const res = await me(headers);
      assert.equal(res.statusCode, 200);
      assert.equal(body(res).id, owner.id);
      assert.equal(body(res).livemode, true);
    }
    for (const headers of [{ 'x-api-key': testKey.key }, { authorization: `Bearer ${testKey.key}` }] as Record<string, string>[]) {
      assert.equal(body(await me(headers)).livemode, false);
    }
  });

  test('a revoked key answers 401 and leaves the list', async () => {
    const { id, key } = await createKey(t.app, owner.cookie, 'live');
    assert.equal((await me({ 'x-api-key': key })).statusCode, 200);
    const res = await revoke(id, { cookie: owner.cookie });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(body(res), { id, revoked: true });
    assert.equal((await me({ 'x-api-key': key })).statusCode, 401);
    assert.equal((await me({ authorization: `Bearer ${key}` })).statusCode, 401);
    const ids = body<{ api_keys: { id: number }[] }>(await list({ cookie: owner.cookie })).api_keys.map((k) => k.id);
    assert.ok(!ids.includes(id));
    assert.equal((await revoke(id, { cookie: owner.cookie })).statusCode, 404, 'revoking twice is 404');
  });

  test('an unknown or malformed key answers 401 and does not fall back to the cookie', async () => {
    const forged = `sk_live_${'A'.repeat(43)}`;
    assert.equal((await me({ 'x-api-key': forged })).statusCode, 401);
    assert.equal((await me({ 'x-api-key': 'sk_live_short' })).statusCode, 401);
    assert.equal((await me({ 'x-api-key': 'sk_test_short', cookie: owner.cookie })).statusCode, 401);
  });

  test('a test key sees and manages test keys only', async () => {
    const live = await createKey(t.app, owner.cookie, 'live');
    const testKey = await createKey(t.app, owner.cookie, 'test');
    const asTest = { 'x-api-key': testKey.key };

    const modes = body<{ api_keys: { mode: string }[] }>(await list(asTest)).api_keys.map((k) => k.mode);
    assert.ok(modes.length > 0);
    assert.deepEqual([...new Set(modes)], ['test']);

    const mint = await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: asTest, payload: { name: 'x', mode: 'live' } });
    assert.equal(mint.statusCode, 403);
    assert.deepEqual(body(mint), { error: 'Forbidden', code: 'forbidden' });
    assert.equal((await revoke(live.id, asTest)).statusCode, 404, 'a live key does not exist for a test key');
    assert.equal((await me({ 'x-api-key': live.key })).statusCode, 200, 'the live key still works');

    const another = await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: asTest, payload: { name: 'y', mode: 'test' } });
    assert.equal(another.statusCode, 201);
  });

  test("one user cannot see or revoke another user's keys", async () => {
    const other = await signUp(t.app);
    const mine = await createKey(t.app, owner.cookie, 'live');
    const ids = body<{ api_keys: { id: number }[] }>(await list({ cookie: other.cookie })).api_keys.map((k) => k.id);
    assert.ok(!ids.includes(mine.id));
    assert.equal((await revoke(mine.id, { cookie: other.cookie })).statusCode, 404);
    assert.equal((await me({ 'x-api-key': mine.key })).statusCode, 200);
  });

  test('every key route needs a credential and validates its input', async () => {
    assert.equal((await t.app.inject({ url: '/v1/api-keys' })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/api-keys', payload: { name: 'x', mode: 'live' } })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/v1/api-keys/1' })).statusCode, 401);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: { cookie: owner.cookie }, payload: { name: '', mode: 'prod' } });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(body<{ details: { field: string }[] }>(bad).details.map((d) => d.field).sort(), ['mode', 'name']);
    assert.equal((await revoke(0, { cookie: owner.cookie })).statusCode, 422);
  });
});
