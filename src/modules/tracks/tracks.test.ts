import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY, iso } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { createDevice } from '../../../test/trackers-kit.js';
import { sharedOrg } from '../../../test/world.js';
import { sweepRetention } from '../retention/index.js';
import { createTrackRecorder } from './recorder.js';
import { appendPositions, type TrackRow } from './tracks.repository.js';

interface Track {
  device_id: string;
  user_id: number;
  total_points: number;
  stops: number;
  points: { lat: number; lng: number; accuracy: number | null; at: string }[];
}

describe('tracks (opt-in): stored, thinned, expired, exported, deleted, and read by the person and admins only', () => {
  let t: TestApp;
  let root: TestUser, owner: TestUser, admin: TestUser, field: TestUser, colleague: TestUser, outsider: TestUser;
  let org: { id: number; slug: string };

  before(async () => {
    t = await buildTestApp({ BEACON_FLUSH_MS: '60000' }); // flushes only when the test calls them: a timer's flush could fall between a beacon and the check that it is held
    root = await signUp(t.app, { name: 'Root' });
    owner = await signUp(t.app, { name: 'Olga Owner' });
    admin = await signUp(t.app, { name: 'Adam Admin' });
    field = await signUp(t.app, { name: 'Fiona Field' });
    colleague = await signUp(t.app, { name: 'Carl Colleague' });
    outsider = await signUp(t.app, { name: 'Otto Outsider' });
    org = await sharedOrg(t.app, {
      by: owner,
      lift: root,
      name: 'Track Ops',
      members: [
        { user: admin, role: 'admin' },
        { user: field, role: 'member' },
        { user: colleague, role: 'member' },
      ],
    });
    await sharedOrg(t.app, { by: outsider, lift: root, name: 'Elsewhere Ops' });
  });
  after(() => t.close());

  const beacon = (u: TestUser, device: string, lat: number, lng: number) =>
    t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: u.cookie }, payload: { type: 'beacon', lat, lng, accuracy: 5, org_id: org.id, meta: { device_id: device } } });
  const setTracks = (days: unknown, u = owner) => t.app.inject({ method: 'PATCH', url: `/v1/orgs/${org.slug}`, headers: { cookie: u.cookie }, payload: { retention: { tracks_days: days } } });
  const track = (u: TestUser, id: string | number, query = '', accept = 'application/json') =>
    t.app.inject({ url: `/v1/devices/${encodeURIComponent(String(id))}/track${query}`, headers: { cookie: u.cookie, accept } });
  const inTable = async (table: 'position_tracks' | 'track_staging', userId: number) =>
    (await t.ctx.db.selectFrom(table as 'position_tracks').selectAll().where('user_id', '=', userId).execute()).length;
  /** Positions stored for a person: staged by a flush or moved to the track since. */
  const stored = async (userId: number) => (await inTable('position_tracks', userId)) + (await inTable('track_staging', userId));

  test('nothing is stored by default; once tracks_days is set each accepted position is, in batches', async () => {
    assert.equal((await beacon(field, 'fiona-phone', 51.5, -0.12)).statusCode, 201);
    await t.ctx.tracks.flush();
    assert.equal(await stored(field.id), 0, 'no track without the opt-in');

    assert.equal((await setTracks(30)).statusCode, 200);
    const retention = body<{ tracks_days: number }>(await t.app.inject({ url: `/v1/orgs/${org.slug}/retention`, headers: { cookie: field.cookie } }));
    assert.equal(retention.tracks_days, 30);
    for (let i = 1; i <= 3; i += 1) {
      t.clock.advance(60_000);
      assert.equal((await beacon(field, 'fiona-phone', 51.5 + i * 0.001, -0.12)).statusCode, 201);
    }
    assert.equal(await stored(field.id), 0, 'held in memory until the flush');
    await t.ctx.tracks.flush();
    assert.deepEqual([await inTable('track_staging', field.id), await inTable('position_tracks', field.id)], [3, 0], 'a flush stages');

    const points = async () => body<Track>(await track(field, 'fiona-phone')).points.map((p) => [p.lat, p.lng, p.accuracy]);
    const expected = [1, 2, 3].map((i) => [51.5 + i * 0.001, -0.12, 5]);
    assert.deepEqual(await points(), expected, 'staged positions are read');
    assert.equal(await t.ctx.tracks.move(), 3);
    assert.deepEqual([await inTable('track_staging', field.id), await inTable('position_tracks', field.id)], [0, 3], 'a move takes them to the track');
    assert.deepEqual(await points(), expected, 'the same track once moved');
    assert.equal(await t.ctx.tracks.move(), 0, 'nothing left to move');
  });

  test('staged positions move once however many instances move at the same time, in the device index’s order', async () => {
    const moved = () => t.ctx.db.selectFrom('position_tracks').select(['id', 'device_id', 'recorded_at']).where('user_id', '=', colleague.id).orderBy('id').execute();
    const before = (await moved()).length;
    const at = (s: number) => iso(new Date(Date.UTC(2026, 0, 1, 0, 0, s)));
    // Staged in arrival order, two devices interleaved, one late upload among them.
    const rows: TrackRow[] = [3, 1, 4, 2, 5, 0].flatMap((s) => [
      { org_id: org.id, livemode: 1, user_id: colleague.id, device_id: 'carl-b', lat: s, lng: 0, accuracy: null, recorded_at: at(s) },
      { org_id: org.id, livemode: 1, user_id: colleague.id, device_id: 'carl-a', lat: s, lng: 0, accuracy: null, recorded_at: at(s) },
    ]);
    await appendPositions(t.ctx.db, rows);
    // Two recorders over one database, as two instances: on PostgreSQL their moves run on two connections at once.
    const other = createTrackRecorder({ db: t.ctx.db, transaction: (fn) => t.ctx.db.transaction().execute((db) => fn({ db, onCommit: (hook) => void hook() })), bus: t.ctx.events.bus, log: t.ctx.log, flushMs: 60_000, moveMs: 60_000 });
    try {
      const counts = await Promise.all([t.ctx.tracks.move(), other.move(), t.ctx.tracks.move()]);
      assert.equal(counts.reduce((a, b) => a + b, 0), rows.length, `each staged row moved once: ${counts.join(' + ')}`);
    } finally {
      await other.close();
    }
    const after = (await moved()).slice(before);
    assert.equal(after.length, rows.length);
    assert.deepEqual(
      after.map((r) => `${r.device_id} ${r.recorded_at.slice(17, 19)}`),
      ['carl-a', 'carl-b'].flatMap((d) => [0, 1, 2, 3, 4, 5].map((s) => `${d} 0${s}`)),
      'written device by device, in time order',
    );
    assert.equal(await inTable('track_staging', colleague.id), 0);
    // The tests below count Carl's devices and positions from scratch.
    await t.ctx.db.deleteFrom('position_tracks').where('user_id', '=', colleague.id).where('device_id', 'in', ['carl-a', 'carl-b']).execute();
  });

  test('a flush keeps every value as sent: device ids an array literal must escape, no accuracy, full-precision coordinates', async () => {
    const devices = ['quote"d', 'comma,brace{}', 'back\\slash', 'NULL', ' spaced ', 'Zürich 🚐'];
    const rows: TrackRow[] = devices.map((device_id, n) => ({ org_id: org.id, livemode: 0, user_id: colleague.id, device_id, lat: 51.50012345678901 + n, lng: -0.1234567890123 - n, accuracy: n % 2 === 0 ? null : 4.25, recorded_at: iso(new Date(Date.UTC(2026, 1, 1, 0, 0, n))) }));
    await appendPositions(t.ctx.db, rows);
    const staged = await t.ctx.db.selectFrom('track_staging').select(['org_id', 'livemode', 'user_id', 'device_id', 'lat', 'lng', 'accuracy', 'recorded_at']).where('user_id', '=', colleague.id).orderBy('id').execute();
    assert.deepEqual(staged.map((r) => ({ ...r, org_id: Number(r.org_id), user_id: Number(r.user_id) })), rows);
    await t.ctx.db.deleteFrom('track_staging').where('user_id', '=', colleague.id).execute();
  });

  test('tracks_days out of 0..3650 is 422 with the field; only owners set it', async () => {
    for (const bad of [-1, 3651, 1.5, 'x']) {
      const res = await setTracks(bad);
      assert.equal(res.statusCode, 422, res.body);
      assert.match(body<{ details: { field: string }[] }>(res).details[0]!.field, /tracks_days/);
    }
    assert.equal((await setTracks(30, admin)).statusCode, 403);
  });

  test('the person and the org’s admins and owners read it; another member 403; another org 404', async () => {
    assert.equal((await track(admin, 'fiona-phone')).statusCode, 200);
    assert.equal((await track(owner, 'fiona-phone')).statusCode, 200);
    assert.equal(body<Track>(await track(owner, 'fiona-phone')).user_id, field.id);
    assert.equal((await track(colleague, 'fiona-phone')).statusCode, 403);
    assert.equal((await track(outsider, 'fiona-phone')).statusCode, 404);
    assert.equal((await track(owner, 'no-such-device')).statusCode, 404);
  });

  test('a tracker app by its id: its fixes are its track; other orgs 404', async () => {
    const d = await createDevice(t, { cookie: field.cookie }, { org_id: org.id, name: 'Fiona van', device_id: 'fiona-van' });
    t.clock.advance(60_000);
    const ts = Math.floor(t.clock.now().getTime() / 1000);
    assert.equal((await t.app.inject({ url: `/v1/trackers/osmand?id=${d.token}&lat=52.1&lon=4.3&timestamp=${ts}` })).statusCode, 200);
    await t.ctx.tracks.flush();
    const res = await track(admin, d.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      body<Track>(res).points.map((p) => [p.lat, p.lng]),
      [[52.1, 4.3]],
    );
    assert.equal((await track(outsider, d.id)).statusCode, 404);
    assert.equal((await track(colleague, d.id)).statusCode, 403);
  });

  test('a range over 31 days is 422 on `to`', async () => {
    const to = t.clock.now();
    const from = new Date(to.getTime() - 32 * DAY);
    const res = await track(field, 'fiona-phone', `?from=${iso(from)}&to=${iso(to)}`);
    assert.equal(res.statusCode, 422);
    assert.equal(body<{ details: { field: string }[] }>(res).details[0]!.field, 'to');
    assert.equal((await track(field, 'fiona-phone', `?from=${iso(new Date(to.getTime() - 31 * DAY))}&to=${iso(to)}`)).statusCode, 200);
  });

  test('GeoJSON with Accept: application/geo+json: a Feature with a LineString, the times in properties', async () => {
    const res = await track(field, 'fiona-phone', '', 'application/geo+json');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/geo\+json/);
    const f = body<{ type: string; geometry: { type: string; coordinates: number[][] }; properties: { times: string[]; device_id: string } }>(res);
    assert.equal(f.type, 'Feature');
    assert.equal(f.geometry.type, 'LineString');
    assert.deepEqual(f.geometry.coordinates, [1, 2, 3].map((i) => [-0.12, 51.5 + i * 0.001]));
    assert.equal(f.properties.times.length, 3);
    assert.equal(f.properties.device_id, 'fiona-phone');
  });

  test('thinned to at most 5,000 points, keeping the first and last point of a stop', async () => {
    const start = t.clock.now().getTime() - 20 * 3_600_000;
    const rows: TrackRow[] = [];
    const at = (i: number) => iso(new Date(start + i * 5_000));
    let i = 0;
    // 3,500 points on the move (a wavy road, straight for its last 500), a 5-minute stop on the
    // road's line (61 points: Ramer-Douglas-Peucker alone would drop them all), then 3,500 more.
    const row = (lat: number, lng: number, when: string): TrackRow => ({ org_id: org.id, livemode: 1, user_id: field.id, device_id: 'fiona-long', lat, lng, accuracy: null, recorded_at: when });
    const wave = (k: number) => (k < 3_000 ? 4.5 + 0.001 * Math.sin(k / 7) : 4.5);
    for (let k = 0; k < 3_500; k += 1, i += 1) rows.push(row(50 + k * 0.0006, wave(k), at(i)));
    const stopLat = 50 + 3_500 * 0.0006; // 67 m from the points either side
    const stopFirst = at(i);
    for (let k = 0; k <= 60; k += 1, i += 1) rows.push(row(stopLat, 4.5, at(i)));
    const stopLast = at(i - 1);
    for (let k = 1; k <= 3_500; k += 1, i += 1) rows.push(row(stopLat + k * 0.0006, k > 500 ? 4.5 + 0.001 * Math.sin(k / 7) : 4.5, at(i)));
    await appendPositions(t.ctx.db, rows);

    const res = await track(field, 'fiona-long');
    assert.equal(res.statusCode, 200);
    const got = body<Track>(res);
    assert.equal(got.total_points, rows.length);
    assert.ok(got.points.length <= 5_000, `${got.points.length} points`);
    assert.ok(got.points.length > 2);
    assert.ok(got.stops >= 1);
    const times = got.points.map((p) => p.at);
    assert.ok(times.includes(stopFirst), 'the stop’s first point');
    assert.ok(times.includes(stopLast), 'the stop’s last point');
    assert.equal(times[0], rows[0]!.recorded_at);
    assert.equal(times.at(-1), rows.at(-1)!.recorded_at);
  });

  test('GET /v1/devices lists field terminals (with their owner) beside tracker apps', async () => {
    const res = await t.app.inject({ url: '/v1/devices', headers: { cookie: admin.cookie } });
    assert.equal(res.statusCode, 200, res.body);
    const list = body<{ devices: { device_id: string }[]; field_terminals: { device_id: string; user_id: number; user_name: string; org_id: number }[] }>(res);
    assert.ok(list.devices.some((d) => d.device_id === 'fiona-van'));
    const phone = list.field_terminals.find((f) => f.device_id === 'fiona-phone');
    assert.deepEqual(phone && [phone.user_id, phone.user_name, phone.org_id], [field.id, 'Fiona Field', org.id]);
    assert.ok(list.field_terminals.some((f) => f.device_id === 'fiona-long'), 'known by its stored track alone');
    assert.ok(!list.field_terminals.some((f) => f.device_id === 'fiona-van'), 'a tracker app is not a field terminal');
    const colleagues = body<{ field_terminals: unknown[] }>(await t.app.inject({ url: '/v1/devices', headers: { cookie: colleague.cookie } }));
    assert.deepEqual(colleagues.field_terminals, [], "a member sees their own only");
    const outsiders = body<{ field_terminals: unknown[] }>(await t.app.inject({ url: '/v1/devices', headers: { cookie: outsider.cookie } }));
    assert.deepEqual(outsiders.field_terminals, []);
  });

  test('the retention sweep deletes positions older than tracks_days', async () => {
    const now = t.clock.now().getTime();
    const old = iso(new Date(now - 31 * DAY));
    const recent = iso(new Date(now - 29 * DAY));
    await appendPositions(t.ctx.db, [
      { org_id: org.id, livemode: 1, user_id: colleague.id, device_id: 'carl-phone', lat: 1, lng: 2, accuracy: null, recorded_at: old },
      { org_id: org.id, livemode: 1, user_id: colleague.id, device_id: 'carl-phone', lat: 1, lng: 2, accuracy: null, recorded_at: recent },
    ]);
    const swept = await sweepRetention(t.ctx);
    assert.ok(swept.tracks >= 1);
    const left = await t.ctx.db.selectFrom('position_tracks').select('recorded_at').where('user_id', '=', colleague.id).execute();
    assert.deepEqual(left.map((r) => r.recorded_at), [recent]);
  });

  test("in the person's export, and deleted with the person", async () => {
    const res = await t.app.inject({ url: '/v1/auth/me/export', headers: { cookie: field.cookie } });
    assert.equal(res.statusCode, 200);
    const tracks = body<{ tracks: { device_id: string; lat: number; at: string; org_id: number }[] }>(res).tracks;
    assert.ok(tracks.some((p) => p.device_id === 'fiona-phone' && p.lat === 51.501 && p.org_id === org.id));
    assert.equal(tracks.length, await stored(field.id));

    const gone = await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: { cookie: field.cookie }, payload: { password: field.password } });
    assert.equal(gone.statusCode, 200, gone.body);
    assert.equal(await stored(field.id), 0);
  });

  test('tracks_days back to 0 stores nothing more, and the sweep removes what was kept', async () => {
    assert.equal((await setTracks(0)).statusCode, 200);
    assert.equal((await beacon(colleague, 'carl-phone', 10, 10)).statusCode, 201);
    await t.ctx.tracks.flush();
    await sweepRetention(t.ctx);
    assert.equal(await stored(colleague.id), 0);
  });
});
