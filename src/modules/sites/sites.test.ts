// Sites (geofences, issue #38): CRUD with every 422, and devices entering and leaving them from the
// beacon path (field terminal and tracker), with hysteresis, recorded once (audit, stream, subscriptions).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { secondInstance, testDialect, type Headers } from '../../../test/helpers.js';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';
import { createDevice, pathOf } from '../../../test/trackers-kit.js';
import { dispatchWorld, signInAgain, type DispatchWorld } from '../../../test/world.js';

interface SiteView {
  id: number;
  org_id: number;
  livemode: boolean;
  name: string;
  kind: 'circle' | 'polygon';
  lat: number | null;
  lng: number | null;
  radius_m: number | null;
  area: { type: 'Polygon'; coordinates: number[][][] } | null;
}

// A square of about 1.1 km around (51.5, -0.12); a polygon across the antimeridian in Fiji.
const square = { type: 'Polygon', coordinates: [[[-0.125, 51.495], [-0.115, 51.495], [-0.115, 51.505], [-0.125, 51.505], [-0.125, 51.495]]] };
const acrossDateLine = { type: 'Polygon', coordinates: [[[179.99, -16.51], [-179.99, -16.51], [-179.99, -16.49], [179.99, -16.49], [179.99, -16.51]]] };

describe(`sites (${testDialect})`, () => {
  let w: DispatchWorld;
  let base: string;
  let admin: Headers;
  let ann: Headers;
  before(async () => {
    w = await dispatchWorld({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' });
    w.t.clock.set('2026-03-02T08:00:00.000Z');
    await signInAgain(w);
    base = `/v1/orgs/${w.orgSlug}/sites`;
    admin = w.as(w.admin);
    ann = w.as(w.ann);
  });
  after(() => w.close());

  const create = (body: object, headers: Headers = admin) => w.call(headers, 'POST', base, body);
  const problem = async (body: object, field: string, method: 'POST' | 'PATCH' = 'POST', url = base) => {
    const res = await w.call(admin, method, url, body);
    assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
    const fields = (res.json<{ details?: { field: string }[] }>().details ?? []).map((d) => d.field);
    assert.ok(fields.some((f) => f === field || f.startsWith(`${field}`)), `${field} in ${JSON.stringify(res.json())}`);
  };

  describe('CRUD', () => {
    test('admins create circles and polygons, members read them, test mode keeps its own', async () => {
      const circle = await w.ok<SiteView>(admin, 'POST', base, { name: 'Depot', lat: 51.5, lng: -0.12, radius_m: 200 });
      assert.equal(circle.kind, 'circle');
      assert.deepEqual([circle.lat, circle.lng, circle.radius_m, circle.area, circle.livemode], [51.5, -0.12, 200, null, true]);
      const poly = await w.ok<SiteView>(w.as(w.owner), 'POST', base, { name: ' Yard ', area: square });
      assert.deepEqual([poly.kind, poly.name, poly.lat, poly.radius_m], ['polygon', 'Yard', null, null]);
      assert.deepEqual(poly.area, square);

      const list = await w.ok<{ sites: SiteView[] }>(ann, 'GET', base);
      assert.deepEqual(list.sites.map((s) => s.name), ['Depot', 'Yard']);
      assert.equal((await w.ok<SiteView>(ann, 'GET', `${base}/${poly.id}`)).name, 'Yard');

      assert.deepEqual((await w.ok<{ sites: SiteView[] }>(w.testKey, 'GET', base)).sites, [], 'test mode sees none of live');
      const sandbox = await w.ok<SiteView>(w.testKey, 'POST', base, { name: 'Sandbox', lat: 1, lng: 1, radius_m: 10 });
      assert.equal(sandbox.livemode, false);
      assert.equal((await w.call(admin, 'GET', `${base}/${sandbox.id}`)).statusCode, 404);

      const patched = await w.ok<SiteView>(admin, 'PATCH', `${base}/${circle.id}`, { radius_m: 300, name: 'Depot north' });
      assert.deepEqual([patched.name, patched.lat, patched.radius_m], ['Depot north', 51.5, 300]);
      const toPolygon = await w.ok<SiteView>(admin, 'PATCH', `${base}/${circle.id}`, { area: square });
      assert.deepEqual([toPolygon.kind, toPolygon.lat, toPolygon.radius_m], ['polygon', null, null]);
      await problem({ radius_m: 50 }, 'lat', 'PATCH', `${base}/${circle.id}`);
      const back = await w.ok<SiteView>(admin, 'PATCH', `${base}/${circle.id}`, { lat: 51.6, lng: -0.1, radius_m: 50 });
      assert.deepEqual([back.kind, back.lat, back.area], ['circle', 51.6, null]);

      assert.deepEqual(await w.ok(admin, 'DELETE', `${base}/${circle.id}`), { id: circle.id, deleted: true });
      assert.equal((await w.call(ann, 'GET', `${base}/${circle.id}`)).statusCode, 404);
      await w.ok(admin, 'DELETE', `${base}/${poly.id}`);
      await w.ok(w.testKey, 'DELETE', `${base}/${sandbox.id}`);
    });

    test('members may not write (403), strangers see nothing (404), no credential is 401', async () => {
      const site = await w.ok<SiteView>(admin, 'POST', base, { name: 'Gate', lat: 51.5, lng: -0.12, radius_m: 100 });
      assert.equal((await create({ name: 'X', lat: 1, lng: 1, radius_m: 100 }, ann)).statusCode, 403);
      assert.equal((await w.call(ann, 'PATCH', `${base}/${site.id}`, { name: 'Y' })).statusCode, 403);
      assert.equal((await w.call(ann, 'DELETE', `${base}/${site.id}`)).statusCode, 403);
      const stranger = w.as(w.stranger);
      for (const [method, url] of [['GET', base], ['GET', `${base}/${site.id}`], ['DELETE', `${base}/${site.id}`]] as const) {
        assert.equal((await w.call(stranger, method, url)).statusCode, 404, `${method} ${url}`);
      }
      assert.equal((await w.call(stranger, 'POST', base, { name: 'X', lat: 1, lng: 1, radius_m: 100 })).statusCode, 404);
      assert.equal((await w.call({}, 'GET', base)).statusCode, 401);
      await w.ok(admin, 'DELETE', `${base}/${site.id}`);
    });

    test('every 422 names its field', async () => {
      await problem({ name: 'r', lat: 51, lng: 0, radius_m: 9 }, 'radius_m');
      await problem({ name: 'r', lat: 51, lng: 0, radius_m: 50_001 }, 'radius_m');
      await problem({ name: 'r', lat: 90.5, lng: 0, radius_m: 100 }, 'lat');
      await problem({ name: 'r', lat: 51, lng: -180.1, radius_m: 100 }, 'lng');
      await problem({ name: 'r', lat: 51, lng: 0 }, 'radius_m');
      await problem({ name: 'r' }, 'lat');
      await problem({ name: '  ', lat: 51, lng: 0, radius_m: 100 }, 'name');
      await problem({ name: 'both', lat: 51, lng: 0, radius_m: 100, area: square }, 'area');
      const ring = (coordinates: number[][]) => ({ type: 'Polygon', coordinates: [coordinates] });
      await problem({ name: 'open', area: ring([[0, 0], [1, 0], [1, 1], [0, 1]]) }, 'area.coordinates');
      await problem({ name: 'short', area: ring([[0, 0], [1, 0], [0, 0]]) }, 'area.coordinates');
      await problem({ name: 'bow tie', area: ring([[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]) }, 'area.coordinates');
      await problem({ name: 'lat', area: ring([[0, 0], [1, 0], [1, 91], [0, 0]]) }, 'area.coordinates');
      await problem({ name: 'lng', area: ring([[0, 0], [181, 0], [1, 1], [0, 0]]) }, 'area.coordinates');
      const many = Array.from({ length: 1001 }, (_, i) => [Math.cos((i / 1001) * 2 * Math.PI), Math.sin((i / 1001) * 2 * Math.PI)]);
      await problem({ name: 'many', area: ring([...many, many[0]!]) }, 'area.coordinates');
      // 1000 positions (999 distinct and the first again) is allowed.
      const most = Array.from({ length: 999 }, (_, i) => [Math.cos((i / 999) * 2 * Math.PI), Math.sin((i / 999) * 2 * Math.PI)]);
      const ok = await w.ok<SiteView>(admin, 'POST', base, { name: 'round', area: ring([...most, most[0]!]) });
      await w.ok(admin, 'DELETE', `${base}/${ok.id}`);
    });
  });

  describe('entering and leaving', () => {
    let stream: SseClient;
    let strangerStream: SseClient;
    let t0: number;
    before(async () => {
      const port = await listen(w.t);
      stream = await connectSse(port, '/v1/signals/stream', ann);
      strangerStream = await connectSse(port, '/v1/signals/stream', w.as(w.stranger));
      await stream.waitForEvent('connected');
      await strangerStream.waitForEvent('connected');
      t0 = w.t.clock.nowMs();
    });
    after(async () => {
      await stream.close();
      await strangerStream.close();
    });

    let step = 0;
    /** Ann's phone (or `device`) reports a position; the watcher's writes are awaited. */
    const fix = async (lat: number, lng: number, accuracy: number | null, device = 'ann-phone', headers: Headers = ann) => {
      w.t.clock.set(new Date(t0 + ++step * 1000).toISOString());
      const res = await w.call(headers, 'POST', '/v1/signals', { type: 'beacon', org_id: w.orgId, lat, lng, ...(accuracy === null ? {} : { accuracy }), meta: { device_id: device } });
      assert.equal(res.statusCode, 201, res.body);
      await w.t.ctx.sites.idle();
    };
    const audit = async (siteId: number) => {
      const rows = await w.t.ctx.db.selectFrom('audit_log').selectAll().where('action', 'in', ['site.enter', 'site.exit']).orderBy('id').execute();
      return rows.filter((r) => (JSON.parse(r.meta) as { site_id: number }).site_id === siteId).map((r) => [r.action, r.user_id, r.device_id]);
    };

    test('a circle: the first fix inside enters; the edge band decides nothing; beyond radius + accuracy leaves; poor accuracy is ignored', async () => {
      const site = await w.ok<SiteView>(admin, 'POST', base, { name: 'Depot', lat: 51.5, lng: -0.12, radius_m: 100 });
      const hook = await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/webhooks`, { url: 'http://127.0.0.1:9/sites', events: ['site.enter'], format: 'standard' });
      // 1 degree of latitude is 111.2 km: 0.0008° ≈ 89 m, 0.001° ≈ 111 m, 0.0013° ≈ 145 m.
      await fix(51.5 + 0.0013, -0.12, 10);
      assert.deepEqual(await audit(site.id), [], 'outside');
      await fix(51.5, -0.12, 150);
      assert.deepEqual(await audit(site.id), [], 'accuracy worse than the radius decides nothing');
      await fix(51.5 + 0.0008, -0.12, 20);
      assert.deepEqual(await audit(site.id), [['site.enter', w.ann.id, 'ann-phone']]);
      const entered = await stream.waitForEvent('site.enter', (p) => p.site_id === site.id);
      assert.deepEqual(entered.data, {
        type: 'site.enter',
        payload: { site_id: site.id, site_name: 'Depot', org_id: w.orgId, user_id: w.ann.id, device_id: 'ann-phone', lat: 51.5008, lng: -0.12, accuracy: 20, at: w.t.clock.now().toISOString() },
      });
      await fix(51.5, -0.12, 5);
      await fix(51.5 + 0.001, -0.12, 30); // 111 m: beyond the radius, within radius + accuracy
      assert.deepEqual(await audit(site.id), [['site.enter', w.ann.id, 'ann-phone']], 'inside still (hysteresis)');
      await fix(51.5 + 0.001, -0.12, 5); // 111 m > 100 + 5
      assert.deepEqual(await audit(site.id), [['site.enter', w.ann.id, 'ann-phone'], ['site.exit', w.ann.id, 'ann-phone']]);
      await stream.waitForEvent('site.exit', (p) => p.site_id === site.id);
      await fix(51.5 + 0.0005, -0.12, null); // no accuracy: counts as exact
      assert.equal((await audit(site.id)).length, 3);

      // The subscription got each entry (not the exit: it did not ask for it), as a Standard Webhook.
      const posts = await w.t.ctx.db.selectFrom('outbox').select(['topic', 'payload', 'recipient']).where('topic', 'like', 'site.%').orderBy('id').execute();
      assert.deepEqual(posts.map((p) => p.topic), ['site.enter', 'site.enter']);
      const body = (JSON.parse(posts[0]!.payload) as { subscription_id: number; body: { type: string; data: Record<string, unknown> } });
      assert.equal(body.subscription_id, hook.id);
      assert.deepEqual(body.body.data, { site: { id: site.id, name: 'Depot' }, user: { id: w.ann.id, name: 'Ann Responder' }, device_id: 'ann-phone', position: { lat: 51.5008, lng: -0.12, accuracy: 20 } });

      // The audit log shows them to admins.
      const entries = (await w.ok<{ entries: { action: string; meta: Record<string, unknown> }[] }>(admin, 'GET', `/v1/audit?org_id=${w.orgId}`)).entries.filter((e) => e.action.startsWith('site.'));
      assert.deepEqual(entries.map((e) => e.action), ['site.enter', 'site.exit', 'site.enter']);
      assert.equal(entries[0]!.meta.site_name, 'Depot');

      // Only the org's members hear them: the stranger's stream carries their own beacon, no site event.
      assert.equal((await w.call(w.as(w.stranger), 'POST', '/v1/signals', { type: 'beacon', lat: 10, lng: 10, meta: { device_id: 'stan' } })).statusCode, 201);
      await strangerStream.waitForEvent('signal.beacon', (p) => p.user_id === w.stranger.id);
      assert.deepEqual(strangerStream.events.filter((e) => e.type.startsWith('site.')), []);
      await w.ok(w.as(w.owner), 'DELETE', `/v1/orgs/${w.orgSlug}/webhooks/${hook.id}`);
      await w.ok(admin, 'DELETE', `${base}/${site.id}`);
    });

    test('a polygon: inside with accuracy up to 50 m; leaves when outside by more than the accuracy', async () => {
      const site = await w.ok<SiteView>(admin, 'POST', base, { name: 'Yard', area: square });
      await fix(51.5, -0.12, 60);
      assert.deepEqual(await audit(site.id), [], 'accuracy worse than 50 m decides nothing');
      await fix(51.5, -0.12, 40);
      assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter']);
      // The north edge is at 51.505; 51.5052 is 22 m outside it.
      await fix(51.5052, -0.12, 30);
      assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter'], 'within its accuracy of the edge');
      await fix(51.5052, -0.12, 10);
      assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter', 'site.exit']);
      await w.ok(admin, 'DELETE', `${base}/${site.id}`);
    });

    test('a polygon across the antimeridian', async () => {
      const site = await w.ok<SiteView>(admin, 'POST', base, { name: 'Fiji dateline', area: acrossDateLine });
      await fix(-16.5, 179.5, 5);
      assert.deepEqual(await audit(site.id), [], 'far west of it (the polygon is not the whole globe)');
      await fix(-16.5, -179.995, 5);
      await fix(-16.5, 179.995, 5);
      assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter'], 'either side of 180 is inside');
      await fix(-16.5, -179.9, 5);
      assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter', 'site.exit']);
      await w.ok(admin, 'DELETE', `${base}/${site.id}`);
    });

    test('an OsmAnd tracker enters and leaves as its device', async () => {
      const site = await w.ok<SiteView>(admin, 'POST', base, { name: 'Workshop', lat: 48.8566, lng: 2.3522, radius_m: 50 });
      const d = await createDevice(w.t, ann, { name: 'Ann van', org_id: w.orgId });
      const osmand = async (lat: number, lon: number, accuracy: number) => {
        w.t.clock.set(new Date(t0 + ++step * 1000).toISOString());
        const res = await w.t.app.inject({ url: `${pathOf(d.osmand_url)}&lat=${lat}&lon=${lon}&accuracy=${accuracy}` });
        assert.equal(res.statusCode, 200, res.body);
        await w.t.ctx.sites.idle();
      };
      await osmand(48.8566, 2.3522, 8);
      await osmand(48.86, 2.3522, 8);
      assert.deepEqual(await audit(site.id), [
        ['site.enter', w.ann.id, d.device_id],
        ['site.exit', w.ann.id, d.device_id],
      ]);
      await w.ok(admin, 'DELETE', `${base}/${site.id}`);
    });

    test('turning a beacon off records no exit; a site changed is seen at the next fix', async () => {
      const site = await w.ok<SiteView>(admin, 'POST', base, { name: 'Clinic', lat: 40, lng: 20, radius_m: 100 });
      await fix(40, 20, 5, 'clinic-phone');
      assert.equal((await w.call(ann, 'DELETE', '/v1/signals/beacon?device_id=clinic-phone')).statusCode < 300, true);
      await w.t.ctx.sites.idle();
      assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter']);
      // Moved away from the device: the next fix leaves it.
      await w.ok(admin, 'PATCH', `${base}/${site.id}`, { lat: 41 });
      await fix(40, 20, 5, 'clinic-phone');
      assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter', 'site.exit']);
      await w.ok(admin, 'DELETE', `${base}/${site.id}`);
    });

    test('exactly once across two instances (and after a restart of the memory)', async () => {
      const site = await w.ok<SiteView>(admin, 'POST', base, { name: 'Harbour', lat: 30, lng: 30, radius_m: 100 });
      const second = await secondInstance(w.t);
      try {
        const at = w.t.clock.now().toISOString();
        const observed = { orgId: w.orgId, mode: 'live' as const, userId: w.ann.id, deviceId: 'harbour-phone', lat: 30, lng: 30, accuracy: 5, at };
        // Both instances see the device enter at once (a fix each: load balancing, a retry).
        w.t.ctx.positions.observe(w.t.ctx, observed);
        second.ctx.positions.observe(second.ctx, observed);
        await Promise.all([w.t.ctx.sites.idle(), second.ctx.sites.idle()]);
        assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter']);
        // Then both see it leave.
        const away = { ...observed, lat: 30.01 };
        w.t.ctx.positions.observe(w.t.ctx, away);
        second.ctx.positions.observe(second.ctx, away);
        await Promise.all([w.t.ctx.sites.idle(), second.ctx.sites.idle()]);
        assert.deepEqual((await audit(site.id)).map((r) => r[0]), ['site.enter', 'site.exit']);
        const presence = await w.t.ctx.db.selectFrom('site_presence').selectAll().where('site_id', '=', site.id).execute();
        assert.deepEqual(presence.map((p) => [p.user_id, p.device_key, p.inside]), [[w.ann.id, 'harbour-phone', 0]]);
      } finally {
        await second.close();
      }
      await w.ok(admin, 'DELETE', `${base}/${site.id}`);
    });
  });
});
