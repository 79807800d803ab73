import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createContext } from '../../context.js';
import { sha256 } from '../../lib/crypto.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { createDevice } from '../../../test/trackers-kit.js';
import { authenticate, ingest } from '../trackers/ingest.js';
import type { MemoryBeaconStore } from './beacon-memory.js';

// The memory store (no REDIS_URL): transitions written at once, positions in batches, state
// loaded on first use (not at start) and flushed at close. The crash side (kill -9) is test/beacon-crash.test.ts.

describe('beacon state in memory', () => {
  let t: TestApp;
  let u: TestUser;
  let org: number;
  before(async () => {
    // A long flush interval: only the flushes the tests ask for run.
    t = await buildTestApp({ BEACON_FLUSH_MS: '60000' });
    u = await signUp(t.app, { name: 'Mia' });
    org = body<{ orgs: { id: number; primary: boolean }[] }>(await t.app.inject({ url: '/v1/orgs', headers: { cookie: u.cookie } })).orgs.find((o) => o.primary)!.id;
  });
  after(() => t.close());

  const ping = (device: string, lat: number, lng = 5) =>
    t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: u.cookie }, payload: { type: 'beacon', lat, lng, meta: { device_id: device } } });
  const row = (device: string) => t.ctx.db.selectFrom('beacon_states').selectAll().where('user_id', '=', u.id).where('device_key', '=', device).executeTakeFirst();
  const audits = async (device: string) =>
    (await t.ctx.db.selectFrom('audit_log').select('action').where('device_id', '=', device).orderBy('id').execute()).map((r) => r.action);

  test('turning on is durable when answered: the row (with the first position) and beacon_on, before any flush', async () => {
    assert.equal((await ping('m1', 10)).statusCode, 201);
    const r = await row('m1');
    assert.deepEqual([r?.active, r?.lat, r?.org_id], [1, 10, org]);
    assert.deepEqual(await audits('m1'), ['beacon_on']);
  });

  test('a ping of an active device writes nothing; the flush writes every moved device in one go', async () => {
    await ping('m2', 20);
    t.clock.advance(1_000);
    assert.equal((await ping('m1', 11)).statusCode, 201);
    assert.equal((await ping('m2', 21)).statusCode, 201);
    assert.equal((await row('m1'))?.lat, 10, 'not written yet');
    assert.equal((await row('m2'))?.lat, 20, 'not written yet');
    const store = t.ctx.beacons as MemoryBeaconStore;
    assert.equal(store.kind, 'memory');
    assert.equal(store.dirtyCount(), 2);
    // The live views read memory: the map and the responders see the new positions at once.
    const map = body<{ beacons: { device_id: string; lat: number }[] }>(await t.app.inject({ url: '/v1/signals/beacons', headers: { cookie: u.cookie } }));
    assert.deepEqual(map.beacons.filter((b) => b.device_id === 'm1').map((b) => b.lat), [11]);

    await store.flush();
    assert.equal(store.dirtyCount(), 0);
    assert.deepEqual([(await row('m1'))?.lat, (await row('m1'))?.last_seen_at], [11, new Date(t.clock.now()).toISOString()]);
    assert.equal((await row('m2'))?.lat, 21);
    assert.deepEqual(await audits('m1'), ['beacon_on'], 'no transition written by pings of an active device');
  });

  test('switching off is durable when answered: the row inactive with its last position, and beacon_off', async () => {
    await ping('m3', 30);
    t.clock.advance(1_000);
    await ping('m3', 31);
    const res = await t.app.inject({ method: 'DELETE', url: '/v1/signals/beacon', headers: { cookie: u.cookie }, payload: { device_id: 'm3' } });
    assert.equal(res.statusCode, 200);
    const r = await row('m3');
    assert.deepEqual([r?.active, r?.lat], [0, 31]);
    assert.deepEqual(await audits('m3'), ['beacon_on', 'beacon_off']);
  });

  test('a new instance on the same database loads the active devices with their flushed positions; its close flushes', async () => {
    await ping('m4', 40);
    t.clock.advance(1_000);
    await ping('m4', 41);
    await t.ctx.beacons.flush();

    const other = await createContext(t.ctx.config, { clock: t.clock });
    try {
      const store = other.beacons;
      await store.ready();
      const seen = await store.active(other.db, { orgIds: [org], mode: 'live' });
      const m4 = seen.find((b) => b.device_key === 'm4');
      assert.deepEqual([m4?.lat, m4?.active, m4?.user_name], [41, 1, 'Mia']);
      assert.ok(!seen.some((b) => b.device_key === 'm3'), 'switched off before: not loaded as active');
      // A ping on the new instance, then its graceful close: the position is in the table.
      t.clock.advance(1_000);
      const key = { mode: 'live' as const, userId: u.id, deviceKey: 'm4' };
      const now = t.clock.now().toISOString();
      const r = await store.recordPing(other.db, key, { orgId: org, deviceId: 'm4', lat: 42, lng: 5, accuracy: null, meta: '{"device_id":"m4"}', positionAt: now, now });
      assert.deepEqual(r, { turnedOn: false, moved: true });
    } finally {
      await other.close();
    }
    assert.equal((await row('m4'))?.lat, 42, 'flushed by close');
  });

  test('createContext reads no beacon state (issue #40): the first call loads it, and answers as if it had been loaded at start', async () => {
    await ping('m6', 30);
    await t.ctx.beacons.flush();
    const queries: string[] = [];
    const other = await createContext(t.ctx.config, { clock: t.clock, onQuery: (sql) => queries.push(sql) });
    try {
      assert.deepEqual(queries.filter((q) => q.includes('beacon_states')), [], 'nothing read at start');
      const now = t.clock.now().toISOString();
      const key = { mode: 'live' as const, userId: u.id, deviceKey: 'm6' };
      const p = { orgId: org, deviceId: 'm6', lat: 31, lng: 5, accuracy: null, meta: '{"device_id":"m6"}', positionAt: now, now };
      assert.equal(other.beacons.pingActive?.(key, p), undefined, 'not loaded yet: the synchronous path declines (the caller calls recordPing)');
      // The first call loads the active rows: m6 is known to be on, so this ping moves it and turns nothing on.
      assert.deepEqual(await other.beacons.recordPing(other.db, key, p), { turnedOn: false, moved: true });
      assert.equal(queries.filter((q) => q.includes('beacon_states')).length, 1, 'one load');
      assert.deepEqual(await audits('m6'), ['beacon_on'], 'no second beacon_on');
      // Loaded: the synchronous path moves it from now on, and the other calls read memory.
      assert.deepEqual(other.beacons.pingActive?.(key, { ...p, lat: 32 }), { turnedOn: false, moved: true });
      const seen = await other.beacons.active(other.db, { orgIds: [org], mode: 'live' });
      assert.equal(seen.find((b) => b.device_key === 'm6')?.lat, 32);
      assert.equal(queries.filter((q) => q.includes('beacon_states')).length, 1, 'still one load');
    } finally {
      await other.close();
    }
  });

  test('a store never used reads nothing, even at close; a failed load is tried again by the next call', async () => {
    const queries: string[] = [];
    const unused = await createContext(t.ctx.config, { clock: t.clock, onQuery: (sql) => queries.push(sql) });
    await unused.close();
    assert.deepEqual(queries.filter((q) => q.includes('beacon_states')), []);

    const other = await createContext(t.ctx.config, { clock: t.clock });
    try {
      const db = other.db;
      // The first load fails (the table is out of reach for a moment), the next succeeds.
      await sql`alter table beacon_states rename to beacon_states_away`.execute(db);
      try {
        await assert.rejects(other.beacons.active(db, { orgIds: [org], mode: 'live' }));
      } finally {
        await sql`alter table beacon_states_away rename to beacon_states`.execute(db);
      }
      const seen = await other.beacons.active(db, { orgIds: [org], mode: 'live' });
      assert.ok(seen.some((b) => b.device_key === 'm6'), 'loaded by the next call');
    } finally {
      await other.close();
    }
  });

  test('pingActive moves a device that is on synchronously, as recordPing would, and declines anything else', async () => {
    const store = t.ctx.beacons as MemoryBeaconStore;
    await store.ready();
    const key = { mode: 'live' as const, userId: u.id, deviceKey: 'm5' };
    const at = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
    const pingAt = (lat: number, positionAt: string, now = positionAt) => ({ orgId: org, deviceId: 'm5', lat, lng: 5, accuracy: 3, meta: '{"device_id":"m5"}', positionAt, now });
    const state = async () => (await store.lookup([key]))[0];

    assert.equal(store.pingActive!(key, pingAt(50, at(0))), undefined, 'off: declined (a turn-on goes through recordPing)');
    assert.equal(await state(), undefined, 'and nothing changed');
    assert.deepEqual(await store.recordPing(t.ctx.db, key, pingAt(50, at(0))), { turnedOn: true, moved: true });

    const before = store.dirtyCount();
    assert.deepEqual(store.pingActive!(key, pingAt(51, at(1_000))), { turnedOn: false, moved: true });
    assert.deepEqual([(await state())?.lat, (await state())?.position_at], [51, at(1_000)]);
    assert.equal(store.dirtyCount(), before + 1, 'dirty: written by the next flush');
    // Older than what it shows: not moved, but heard.
    assert.deepEqual(store.pingActive!(key, pingAt(49, at(-5_000), at(2_000))), { turnedOn: false, moved: false });
    assert.deepEqual([(await state())?.lat, (await state())?.last_seen_at], [51, at(2_000)]);

    // A guard that refuses: thrown, and nothing changes.
    const refuse = { check: () => {
      throw new Error('revoked');
    } };
    assert.throws(() => store.pingActive!(key, pingAt(60, at(3_000)), refuse), /revoked/);
    assert.equal((await state())?.lat, 51);

    // While a switch-off of the device is under way: declined (recordPing waits for it instead).
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const off = store.switchOff(t.ctx.db, key, undefined, () => held);
    await new Promise((r) => setImmediate(r));
    assert.equal(store.pingActive!(key, pingAt(70, at(4_000))), undefined, 'a transition is under way');
    release();
    assert.equal((await off)?.lat, 51);
    assert.equal(store.pingActive!(key, pingAt(71, at(5_000))), undefined, 'off again');
  });

  test('a tracker fix authenticated just before its device is revoked is refused, and the device stays off', async () => {
    const d = await createDevice(t, { cookie: u.cookie }, { name: 'Race phone' });
    const fix = { lat: 1, lng: 2, at: null, accuracy: null, alarm: null, meta: {} };
    // On, through the cache.
    await ingest(t.ctx, await authenticate(t.ctx, d.token), 'osmand', [fix]);
    const entry = await authenticate(t.ctx, d.token);
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/devices/${d.id}`, headers: { cookie: u.cookie } })).statusCode, 200);
    assert.equal(entry.valid, false, 'the cached entry was invalidated by the revoke');
    await assert.rejects(ingest(t.ctx, entry, 'osmand', [{ ...fix, lat: 3 }]), (err: { status?: number }) => err.status === 401);
    const on = await t.ctx.beacons.lookup([{ mode: 'live', userId: u.id, deviceKey: d.device_id }]);
    assert.equal(on[0], undefined, 'switched off by the revoke and not on again');
    await assert.rejects(authenticate(t.ctx, d.token), (err: { status?: number }) => err.status === 401);
    assert.equal(sha256(d.token).length, 64);
  });

  test('a moved device is read again: its cached token carries the new org at once', async () => {
    const d = await createDevice(t, { cookie: u.cookie }, { name: 'Mover' });
    const before = await authenticate(t.ctx, d.token);
    assert.equal(before.device.name, 'Mover');
    const res = await t.app.inject({ method: 'PATCH', url: `/v1/devices/${d.id}`, headers: { cookie: u.cookie }, payload: { name: 'Moved' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(before.valid, false);
    assert.equal((await authenticate(t.ctx, d.token)).device.name, 'Moved');
  });
});
