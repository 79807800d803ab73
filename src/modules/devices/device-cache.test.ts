import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { createDevice } from '../../../test/trackers-kit.js';
import { sha256 } from '../../lib/crypto.js';

// The token-text side of the device cache: a known token is answered from memory without hashing,
// and every access notice that covers its device ends that at once (as it ends the hash entry).

describe('device cache by token text', () => {
  let t: TestApp;
  let u: TestUser;
  before(async () => {
    t = await buildTestApp();
    u = await signUp(t.app, { name: 'Cache Owner' });
  });
  after(() => t.close());

  test('a token is known only once resolved; then from memory, the same entry as by its hash', async () => {
    const d = await createDevice(t, { cookie: u.cookie }, { name: 'Known van' });
    const cache = t.ctx.deviceCache;
    assert.equal(cache.known(d.token), undefined, 'not resolved yet');
    const entry = await cache.byTokenText(d.token);
    assert.equal(entry?.device.id, d.id);
    assert.equal(cache.known(d.token), entry);
    assert.equal(await cache.byToken(sha256(d.token)), entry, 'one entry, whichever key');
    // Served from memory: the row can change without a notice and the entry stays (until its age runs out).
    await t.ctx.db.updateTable('devices').set({ name: 'Renamed behind its back' }).where('id', '=', d.id).execute();
    assert.equal(cache.known(d.token)?.device.name, 'Known van');
    assert.equal(cache.known(`${d.token.slice(0, -1)}x`), undefined, 'another text is not that token');
  });

  for (const [label, notice] of [
    ['the device', (d: { id: number }) => ({ deviceId: d.id })],
    ['its user', (_d: { id: number }, userId: number) => ({ userId })],
    ['its user in its org', (_d: { id: number }, userId: number, orgId: number) => ({ userId, orgId })],
    ['its org', (_d: { id: number }, _userId: number, orgId: number) => ({ orgId })],
  ] as const) {
    test(`a notice for ${label} ends the known token at once and invalidates the entry a fix holds`, async () => {
      const d = await createDevice(t, { cookie: u.cookie }, { name: `Van of ${label}` });
      const cache = t.ctx.deviceCache;
      const entry = (await cache.byTokenText(d.token))!;
      assert.equal(cache.known(d.token), entry);
      t.ctx.events.bus.publishAccess(notice(d, u.id, d.org_id));
      assert.equal(entry.valid, false, 'a fix holding it is refused at its next check');
      assert.equal(cache.known(d.token), undefined, 'no longer known: read again');
      const again = await cache.byTokenText(d.token);
      assert.notEqual(again, entry, 'read again from the database');
      assert.equal(again?.valid, true, 'the device itself is still active');
    });
  }

  test('a notice for another device, user or org leaves the known token alone', async () => {
    const d = await createDevice(t, { cookie: u.cookie }, { name: 'Untouched van' });
    const cache = t.ctx.deviceCache;
    const entry = (await cache.byTokenText(d.token))!;
    t.ctx.events.bus.publishAccess({ deviceId: d.id + 1000 });
    t.ctx.events.bus.publishAccess({ userId: u.id + 1000 });
    t.ctx.events.bus.publishAccess({ orgId: d.org_id + 1000 });
    t.ctx.events.bus.publishAccess({ userId: u.id, orgId: d.org_id + 1000 });
    assert.equal(cache.known(d.token), entry);
    assert.equal(entry.valid, true);
  });

  test('a revoked device is not known, and its token resolves to nothing', async () => {
    const d = await createDevice(t, { cookie: u.cookie }, { name: 'Revoked van' });
    const cache = t.ctx.deviceCache;
    await cache.byTokenText(d.token);
    const res = await t.app.inject({ method: 'DELETE', url: `/v1/devices/${d.id}`, headers: { cookie: u.cookie } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(cache.known(d.token), undefined);
    assert.equal(await cache.byTokenText(d.token), undefined);
    assert.equal((await t.app.inject({ url: `/v1/trackers/osmand?id=${d.token}&lat=1&lon=2` })).statusCode, 401);
  });
});
