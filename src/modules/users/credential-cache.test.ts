import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CredentialCache, type CredentialCacheOptions, type KeyGrant, type Memberships, type SessionGrant } from './credential-cache.js';

// The cache on its own: what it keeps, what each notice drops, and its bounds. The request path
// (both databases) is in test/credential-cache.test.ts, two instances in test/cluster/.

function world(options: Partial<CredentialCacheOptions> = {}) {
  let now = 1_000_000;
  let epoch: number | undefined = 0;
  const cache = new CredentialCache({ ttlMs: 5_000, maxEntries: 100, now: () => now, accessEpoch: () => epoch, ...options });
  const loads = { key: 0, session: 0, members: 0 };
  const keys = new Map<string, KeyGrant>();
  const sessions = new Map<string, SessionGrant>();
  const members = new Map<number, Memberships>();
  return {
    cache,
    loads,
    keys,
    sessions,
    members,
    advance: (ms: number) => (now += ms),
    now: () => now,
    setEpoch: (e: number | undefined) => (epoch = e),
    key: (hash: string) =>
      cache.key(hash, () => {
        loads.key += 1;
        return Promise.resolve(keys.get(hash));
      }),
    session: (hash: string) =>
      cache.session(hash, () => {
        loads.session += 1;
        const s = sessions.get(hash);
        return Promise.resolve(s && s.expiresAt > now ? s : undefined);
      }),
    memberships: (userId: number) =>
      cache.memberships(userId, () => {
        loads.members += 1;
        return Promise.resolve(members.get(userId) ?? { orgIds: [], primaryOrgId: undefined });
      }),
  };
}

describe('credential cache', () => {
  test('a key, a session and memberships are read once, then served from memory', async () => {
    const w = world();
    w.keys.set('k1', { userId: 1, mode: 'live', keyId: 10 });
    w.sessions.set('s1', { userId: 1, expiresAt: w.now() + 60_000 });
    w.members.set(1, { orgIds: [5, 6], primaryOrgId: 5 });
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await w.key('k1'), { userId: 1, mode: 'live', keyId: 10 });
      assert.deepEqual(await w.session('s1'), { userId: 1, expiresAt: w.now() + 60_000 });
      assert.deepEqual(await w.memberships(1), { orgIds: [5, 6], primaryOrgId: 5 });
    }
    assert.deepEqual(w.loads, { key: 1, session: 1, members: 1 });
  });

  test('each notice drops what it covers, and only that', async () => {
    const w = world();
    w.keys.set('k1', { userId: 1, mode: 'live', keyId: 10 });
    w.keys.set('k2', { userId: 1, mode: 'test', keyId: 11 });
    w.keys.set('k3', { userId: 2, mode: 'live', keyId: 12 });
    w.sessions.set('s1', { userId: 1, expiresAt: w.now() + 60_000 });
    w.sessions.set('s2', { userId: 2, expiresAt: w.now() + 60_000 });
    w.members.set(1, { orgIds: [5, 6], primaryOrgId: 5 });
    w.members.set(2, { orgIds: [6, 7], primaryOrgId: 7 });
    w.members.set(3, { orgIds: [8], primaryOrgId: 8 });
    const warm = async () => {
      for (const k of ['k1', 'k2', 'k3']) await w.key(k);
      for (const s of ['s1', 's2']) await w.session(s);
      for (const u of [1, 2, 3]) await w.memberships(u);
    };
    await warm();
    assert.deepEqual(w.cache.sizes(), { keys: 3, sessions: 2, memberships: 3, unknown: 0 });

    // A revoked key.
    w.keys.delete('k2');
    w.cache.notice({ keyId: 11 });
    assert.equal(await w.key('k2'), undefined);
    assert.deepEqual(w.cache.sizes(), { keys: 2, sessions: 2, memberships: 3, unknown: 1 });

    // A session that ended.
    w.sessions.delete('s1');
    w.cache.notice({ sessionId: 's1' });
    assert.equal(await w.session('s1'), undefined);
    assert.deepEqual(w.cache.sizes(), { keys: 2, sessions: 1, memberships: 3, unknown: 2 });

    // A membership that ended (or changed, or began): that user's entry only.
    w.members.set(1, { orgIds: [6], primaryOrgId: undefined });
    w.cache.notice({ userId: 1, orgId: 5 });
    assert.deepEqual(w.cache.sizes(), { keys: 2, sessions: 1, memberships: 2, unknown: 2 });
    assert.deepEqual(await w.memberships(1), { orgIds: [6], primaryOrgId: undefined });

    // A deleted org: every user whose entry includes it.
    w.cache.notice({ orgId: 6 });
    assert.deepEqual(w.cache.sizes(), { keys: 2, sessions: 1, memberships: 1, unknown: 2 });

    // A deleted user: their keys, sessions and memberships.
    await warm();
    w.cache.notice({ userId: 2 });
    assert.deepEqual(w.cache.sizes(), { keys: 1, sessions: 0, memberships: 2, unknown: 2 });
    const before = { ...w.loads };
    await w.key('k1'); // user 1's key stays
    assert.equal(w.loads.key, before.key);
  });

  test('a read under way when a notice arrives answers its request but is not kept', async () => {
    const w = world();
    w.keys.set('k1', { userId: 1, mode: 'live', keyId: 10 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = w.cache.key('k1', async () => {
      const grant = w.keys.get('k1');
      await gate; // the key is revoked (and its notice heard) while this read is under way
      return grant;
    });
    w.keys.delete('k1');
    w.cache.notice({ keyId: 10 });
    release();
    assert.deepEqual(await slow, { userId: 1, mode: 'live', keyId: 10 });
    assert.equal(await w.key('k1'), undefined, 'the stale read was not kept');
    assert.equal(w.loads.key, 1);
  });

  test('entries serve for the TTL at most; a session no longer than it lives', async () => {
    const w = world({ ttlMs: 5_000 });
    w.keys.set('k1', { userId: 1, mode: 'live', keyId: 10 });
    w.sessions.set('s1', { userId: 1, expiresAt: w.now() + 2_000 });
    await w.key('k1');
    await w.session('s1');
    w.advance(1_999);
    await w.key('k1');
    assert.ok(await w.session('s1'));
    assert.deepEqual(w.loads, { key: 1, session: 1, members: 0 });
    w.advance(1);
    assert.equal(await w.session('s1'), undefined, 'expired at its expiry, not at the TTL');
    w.advance(2_999);
    await w.key('k1');
    assert.equal(w.loads.key, 1);
    w.advance(1);
    await w.key('k1');
    assert.equal(w.loads.key, 2, 'read again once the TTL is over');
  });

  test('a clock set back makes entries read again rather than serve longer', async () => {
    const w = world();
    w.keys.set('k1', { userId: 1, mode: 'live', keyId: 10 });
    await w.key('k1');
    w.advance(-1);
    await w.key('k1');
    assert.equal(w.loads.key, 2);
  });

  test('an unknown key is remembered for a second at most, so a key made later is not refused for long', async () => {
    const w = world({ ttlMs: 30_000 });
    assert.equal(await w.key('new'), undefined);
    assert.equal(await w.key('new'), undefined);
    assert.equal(w.loads.key, 1);
    w.keys.set('new', { userId: 1, mode: 'live', keyId: 10 });
    w.advance(999);
    assert.equal(await w.key('new'), undefined);
    w.advance(1);
    assert.deepEqual(await w.key('new'), { userId: 1, mode: 'live', keyId: 10 });
  });

  test('bounded: each part holds at most maxEntries, unknown credentials a tenth, and they never push real ones out', async () => {
    const w = world({ maxEntries: 50 });
    for (let i = 0; i < 200; i++) w.keys.set(`k${i}`, { userId: i, mode: 'live', keyId: i });
    for (let i = 0; i < 200; i++) await w.key(`k${i}`);
    for (let i = 0; i < 200; i++) await w.memberships(i);
    assert.deepEqual(w.cache.sizes(), { keys: 50, sessions: 0, memberships: 50, unknown: 0 });
    // The most recently used stay.
    const loaded = w.loads.key;
    for (let i = 150; i < 200; i++) await w.key(`k${i}`);
    assert.equal(w.loads.key, loaded);
    // A flood of random keys fills only the unknown part.
    for (let i = 0; i < 1_000; i++) await w.key(`random${i}`);
    assert.deepEqual(w.cache.sizes(), { keys: 50, sessions: 0, memberships: 50, unknown: 5 });
    for (let i = 150; i < 200; i++) await w.key(`k${i}`);
    assert.equal(w.loads.key, loaded + 1_000);
  });

  test('while notices may be missed (Redis subscriber down) nothing is served from memory; when hearing resumes everything is read again', async () => {
    const w = world();
    w.keys.set('k1', { userId: 1, mode: 'live', keyId: 10 });
    await w.key('k1');
    await w.key('k1');
    assert.equal(w.loads.key, 1);
    w.setEpoch(undefined);
    await w.key('k1');
    await w.key('k1');
    assert.equal(w.loads.key, 3, 'every request reads while the subscriber is down');
    assert.deepEqual(w.cache.sizes(), { keys: 0, sessions: 0, memberships: 0, unknown: 0 });
    w.setEpoch(1);
    await w.key('k1');
    await w.key('k1');
    assert.equal(w.loads.key, 4);
    // A gap nobody asked during: the next epoch still drops what was read before it.
    w.setEpoch(2);
    await w.key('k1');
    assert.equal(w.loads.key, 5);
  });

  test('a read that spans a gap in hearing is not kept', async () => {
    const w = world();
    w.keys.set('k1', { userId: 1, mode: 'live', keyId: 10 });
    await w.cache.key('k1', () => {
      w.setEpoch(1);
      return Promise.resolve(w.keys.get('k1'));
    });
    assert.deepEqual(w.cache.sizes(), { keys: 0, sessions: 0, memberships: 0, unknown: 0 });
  });

  test('a TTL of 0 turns it off', async () => {
    const w = world({ ttlMs: 0 });
    w.keys.set('k1', { userId: 1, mode: 'live', keyId: 10 });
    await w.key('k1');
    await w.key('k1');
    await w.memberships(1);
    await w.memberships(1);
    assert.deepEqual(w.loads, { key: 2, session: 0, members: 2 });
  });
});
