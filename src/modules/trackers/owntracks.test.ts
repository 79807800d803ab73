import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';
import { basic, beaconOf, createDevice, pathOf, type CreatedDevice } from '../../../test/trackers-kit.js';
import { sharedOrg } from '../../../test/world.js';

type Json = Record<string, unknown>;

// OwnTracks' location message as its JSON booklet (owntracks.org/booklet/tech/json) lists it, and
// the request of its Android app in HTTP mode (HttpMessageProcessorEndpoint.kt): POST, JSON body
// with the pseudo-topic, basic auth from the URL or the settings, X-Limit-U / X-Limit-D headers.
const locationMsg = (tst: number, lat = 48.85833, lon = 2.29513) => ({
  _type: 'location',
  acc: 75,
  alt: 13,
  batt: 64,
  bs: 2,
  cog: 270,
  lat,
  lon,
  t: 'u',
  tid: 'JJ',
  tst,
  vel: 54,
  conn: 'w',
  topic: 'owntracks/http/JJ',
});

describe('OwnTracks HTTP mode', () => {
  let t: TestApp;
  let root: TestUser;
  let jane: TestUser;
  let d: CreatedDevice;
  const tst = () => Math.floor(t.clock.now().getTime() / 1000);

  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' });
    jane = await signUp(t.app, { name: 'Jane Jolie' });
    d = await createDevice(t, { cookie: jane.cookie }, { name: 'Jane phone' });
  });
  after(() => t.close());

  const post = (device: CreatedDevice, payload: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/trackers/owntracks',
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-limit-u': 'jane', 'x-limit-d': 'phone', authorization: basic('jane', device.token), ...headers },
      payload: JSON.stringify(payload),
    });

  test('a location with basic auth becomes a beacon (vel km/h -> m/s, bs 2 = charging); 200 with a JSON array', async () => {
    const res = await post(d, locationMsg(tst() - 2));
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /application\/json/);
    assert.ok(Array.isArray(res.json()));
    const b = await beaconOf(t, { cookie: jane.cookie }, d.device_id);
    assert.deepEqual([b?.lat, b?.lng, b?.accuracy, b?.created_at], [48.85833, 2.29513, 75, new Date((tst() - 2) * 1000).toISOString()]);
    assert.deepEqual(b?.meta, { device_id: d.device_id, protocol: 'owntracks', speed: 15, heading: 270, altitude: 13, battery: 64, charging: true, tid: 'JJ', trigger: 'u' });
  });

  test('the token in the URL works too (owntracks_url), and as the basic-auth user name', async () => {
    t.clock.advance(1000);
    const byUrl = await t.app.inject({ method: 'POST', url: pathOf(d.owntracks_url), payload: locationMsg(tst(), 10, 10) });
    assert.equal(byUrl.statusCode, 200, byUrl.body);
    t.clock.advance(1000);
    assert.equal((await post(d, locationMsg(tst(), 11, 11), { authorization: basic(d.token, '') })).statusCode, 200);
    assert.equal((await beaconOf(t, { cookie: jane.cookie }, d.device_id))?.lat, 11);
  });

  test('answers the team: other active members of the org, same mode, as location + card; not other orgs, not test mode', async () => {
    const bob = await signUp(t.app, { name: 'Bob Builder' });
    const cat = await signUp(t.app, { name: 'Cat Walker' });
    const boss = await signUp(t.app, { name: 'Field Team Boss' });
    const org = await sharedOrg(t.app, { by: boss, lift: root, name: 'Field Team', members: [{ user: jane, role: 'member' }, { user: bob, role: 'member' }, { user: cat, role: 'member' }] });
    const mine = await createDevice(t, { cookie: jane.cookie }, { name: 'Jane team phone', org_id: org.id });
    const bobs = await createDevice(t, { cookie: bob.cookie }, { name: 'Bob van', org_id: org.id });
    const testKey = { 'x-api-key': (await createKey(t.app, bob.cookie, 'test')).key };
    const bobsTest = await createDevice(t, testKey, { name: 'Bob sandbox', org_id: org.id });
    const outsider = await signUp(t.app, { name: 'Out Sider' });
    const outsiders = await createDevice(t, { cookie: outsider.cookie }, { name: 'Elsewhere' });
    t.clock.advance(1000);
    for (const dev of [bobs, bobsTest, outsiders]) assert.equal((await t.app.inject({ url: `/v1/trackers/osmand?id=${dev.token}&lat=40&lon=-3.7` })).statusCode, 200);
    // Cat beacons from the field terminal (POST /v1/signals with her session): also a teammate.
    const catBeacon = await t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: cat.cookie }, payload: { type: 'beacon', lat: 41, lng: 2, org_id: org.id } });
    assert.equal(catBeacon.statusCode, 201, catBeacon.body);

    const res = await post(mine, locationMsg(tst()));
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json<Json[]>();
    const locations = answer.filter((m) => m._type === 'location');
    const cards = answer.filter((m) => m._type === 'card');
    assert.deepEqual(cards.map((c) => c.name).sort(), ['Bob Builder', 'Cat Walker']);
    assert.equal(locations.length, 2);
    const bobLoc = locations.find((l) => String(l.topic).endsWith(bobs.device_id))!;
    assert.deepEqual(bobLoc, { _type: 'location', lat: 40, lon: -3.7, tst: tst(), tid: 'BB', topic: `owntracks/${bob.slug}/${bobs.device_id}` });
    const bobCard = cards.find((c) => c.name === 'Bob Builder')!;
    assert.deepEqual([bobCard.tid, bobCard.topic], [bobLoc.tid, bobLoc.topic], 'the card belongs to the location');
    const all = JSON.stringify(answer);
    for (const absent of [bobsTest.device_id, outsiders.device_id, mine.device_id, 'Out Sider', 'Jane Jolie']) assert.ok(!all.includes(absent), absent);

    const testAnswer = await post(bobsTest, locationMsg(tst()));
    assert.ok(!JSON.stringify(testAnswer.json()).includes(bobs.device_id), 'a test device sees test devices only');
  });

  test('other _types and the empty body are answered 200 [] and record nothing', async () => {
    t.clock.advance(1000);
    const before = await beaconOf(t, { cookie: jane.cookie }, d.device_id);
    const others = [
      { _type: 'transition', wtst: 1, lat: 1, lon: 1, tst: tst(), acc: 10, tid: 'JJ', event: 'enter', desc: 'Home', t: 'c' },
      { _type: 'waypoint', desc: 'Home', lat: 1, lon: 1, rad: 100, tst: tst() },
      { _type: 'lwt', tst: tst() },
      { _type: 'encrypted', data: 'AAAA' },
    ];
    for (const m of others) {
      const res = await post(d, m);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), []);
    }
    for (const headers of [{}, { 'content-type': 'application/json; charset=utf-8' }]) {
      const empty = await t.app.inject({ method: 'POST', url: '/v1/trackers/owntracks', headers: { authorization: basic('jane', d.token), ...headers }, payload: '' });
      assert.equal(empty.statusCode, 200, empty.body);
      assert.deepEqual(empty.json(), []);
    }
    assert.deepEqual(await beaconOf(t, { cookie: jane.cookie }, d.device_id), before);
  });

  test('refusals: 401 without or with a wrong password, 400 without a position or tst', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/trackers/owntracks', payload: locationMsg(tst()) });
    assert.equal(res.statusCode, 401);
    assert.equal((await post(d, locationMsg(tst()), { authorization: basic('jane', 'wrong') })).statusCode, 401);
    const { lat: _lat, ...noLat } = locationMsg(tst());
    assert.equal((await post(d, noLat)).statusCode, 400);
    const { tst: _tst, ...noTst } = locationMsg(tst());
    assert.equal((await post(d, noTst)).statusCode, 400);
    assert.equal((await post(d, locationMsg(tst(), 95, 0))).statusCode, 400);
  });
});
