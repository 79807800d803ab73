import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp, type Headers } from './helpers.js';
import { createKey, signUp, type TestUser } from './factories.js';
import { eventOf, listen, type SseClient, type SseFrame, StreamSet } from './sse-client.js';
import { sharedOrg } from './world.js';

type Payload = Record<string, unknown>;

interface SignalView {
  Id: number | null;
  type: string;
  user_id: number;
  user_name: string;
  org_id: number;
  livemode: boolean;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  note: string | null;
  image_url: string | null;
  ticket_id: number | null;
  meta: Record<string, unknown>;
  created_at: string;
}

const BEACON_KEYS = ['accuracy', 'created_at', 'lat', 'lng', 'meta', 'org_id', 'user_id', 'user_name'];
const payloadOf = (f: SseFrame): Payload => eventOf(f)!.payload as Payload;
const withId = (id: number | null) => (p: Payload) => p.Id === id;
const withNote = (note: string) => (p: Payload) => p.note === note;

describe('GET /v1/signals/stream', () => {
  let t: TestApp;
  let port: number;
  let root: TestUser;
  const streams = new StreamSet(() => port, '/v1/signals/stream');

  before(async () => {
    t = await buildTestApp({ SSE_HEARTBEAT_MS: '50' });
    root = await signUp(t.app, { name: 'Root' }); // the first user: instance admin
    port = await listen(t);
  });
  after(async () => {
    await streams.closeAll();
    await t.close();
  });

  const stream = (headers: Headers, path?: string) => streams.open(headers, path);

  async function signal(headers: Headers, payload: Payload): Promise<SignalView> {
    const res = await t.app.inject({ method: 'POST', url: '/v1/signals', headers, payload });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<SignalView>();
  }

  async function stopBeacon(headers: Headers, deviceId?: string): Promise<void> {
    const res = await t.app.inject({ method: 'DELETE', url: '/v1/signals/beacon', headers, payload: deviceId === undefined ? {} : { device_id: deviceId } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { ok: true });
  }

  async function orgIdsOf(u: TestUser): Promise<number[]> {
    const res = await t.app.inject({ url: '/v1/orgs', headers: { cookie: u.cookie } });
    return res.json<{ orgs: { id: number }[] }>().orgs.map((o) => o.id);
  }

  /** A shared org made by an agency-plan boss, with `crew` added as members. */
  /** An org on the agency plan made by a new boss, with `crew` added as members. */
  async function bossOrg(name: string, ...crew: TestUser[]) {
    const boss = await signUp(t.app, { name: `${name} Boss` });
    return { boss, ...(await sharedOrg(t.app, { by: boss, lift: root, name, members: crew.map((user) => ({ user, role: 'member' as const })) })) };
  }

  /** [type, a short label] of every event after `connected`. */
  const summary = (c: SseClient) =>
    c.events
      .filter((e) => e.type !== 'connected')
      .map((e) => {
        const p = e.payload as Payload;
        return [e.type, String(p.note ?? p.device_id ?? (p.meta as Payload | undefined)?.device_id ?? p.user_id)];
      });

  test('the first event is {type: connected, org_ids} with the caller’s orgs, sorted', async () => {
    const crew = await signUp(t.app, { name: 'Crew' });
    const shared = await bossOrg('Connected Ops', crew);
    const orgIds = await orgIdsOf(crew);
    assert.equal(orgIds.length, 2);
    assert.ok(orgIds.includes(shared.id));

    const client = await stream({ cookie: crew.cookie });
    assert.match(String(client.res.headers['content-type']), /^text\/event-stream/);
    assert.equal(client.res.headers['cache-control'], 'no-cache, no-transform');
    const first = client.frames[0]!;
    assert.deepEqual(first.data, { type: 'connected', org_ids: [...orgIds].sort((a, b) => a - b) });
    assert.ok(first.id !== undefined && first.id > 0, 'the connected event carries the stream’s position (issue #32)');

    const keyed = await stream({ 'x-api-key': (await createKey(t.app, crew.cookie, 'test')).key });
    assert.deepEqual(keyed.frames[0]!.data, { type: 'connected', org_ids: [...orgIds].sort((a, b) => a - b) });
  });

  test('answers 401 without a credential', async () => {
    for (const headers of [{}, { cookie: 'muster_session=nope' }, { 'x-api-key': `sk_live_${'A'.repeat(43)}` }] as Headers[]) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/signals/stream`, { headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.deepEqual(await res.json(), { error: 'Unauthorized', code: 'unauthorized' });
    }
  });

  test('signal.beacon carries exactly {user_id, lat, lng, accuracy, meta, created_at, user_name, org_id}, with an id', async () => {
    const u = await signUp(t.app, { name: 'Bea Stream' });
    const headers = { cookie: u.cookie };
    const client = await stream(headers);
    const sent = await signal(headers, { type: 'beacon', lat: 45.5, lng: -73.6, accuracy: 8, meta: { device_id: 'van-12', speed: 14 } });
    const frame = await client.waitForEvent('signal.beacon');
    assert.deepEqual(Object.keys(frame.data as object).sort(), ['payload', 'type']);
    const p = payloadOf(frame);
    assert.deepEqual(Object.keys(p).sort(), BEACON_KEYS);
    assert.deepEqual(p, {
      user_id: u.id,
      lat: 45.5,
      lng: -73.6,
      accuracy: 8,
      meta: { device_id: 'van-12', speed: 14 },
      created_at: sent.created_at,
      user_name: 'Bea Stream',
      org_id: sent.org_id,
    });
    assert.ok(Number.isSafeInteger(frame.id) && frame.id! > 0, `event id ${frame.id}`);

    // A beacon without a device id (the user is the device) and without a position.
    await signal(headers, { type: 'beacon' });
    const bare = payloadOf(await client.waitForEvent('signal.beacon', (x) => x.lat === null));
    assert.deepEqual(Object.keys(bare).sort(), BEACON_KEYS);
    assert.deepEqual([bare.lng, bare.accuracy, bare.meta], [null, null, {}]);
  });

  test('signal.capture, signal.note, signal.checkin and signal.alert carry the signal record with its numeric Id', async () => {
    const u = await signUp(t.app, { name: 'Rec Stream' });
    const headers = { cookie: u.cookie };
    const client = await stream(headers);
    const frames: SseFrame[] = [];
    for (const type of ['capture', 'note', 'checkin', 'alert'] as const) {
      const s = await signal(headers, { type, lat: 1.25, lng: 2.5, accuracy: 3, note: `${type} here`, meta: { device_id: 'cam-1', k: type } });
      assert.ok(Number.isSafeInteger(s.Id) && s.Id! > 0);
      const frame = await client.waitForEvent(`signal.${type}`, withId(s.Id));
      assert.deepEqual(payloadOf(frame), s, `${type}: the payload is what POST answered`);
      assert.equal(typeof payloadOf(frame).Id, 'number');
      frames.push(frame);
    }
    const ids = frames.map((f) => f.id!);
    for (const id of ids) assert.ok(Number.isSafeInteger(id) && id > 0, `event id ${id}`);
    assert.deepEqual([...ids].sort((a, b) => a - b), ids, 'ids grow in publish order');
    assert.equal(new Set(ids).size, 4);
    assert.deepEqual(
      client.events.map((e) => e.type),
      ['connected', 'signal.capture', 'signal.note', 'signal.checkin', 'signal.alert'],
    );
  });

  test('DELETE /v1/signals/beacon broadcasts beacon_off {device_id, user_id, org_id}; nothing when the device was not on', async () => {
    const u = await signUp(t.app);
    const headers = { cookie: u.cookie };
    const [org] = await orgIdsOf(u);
    const client = await stream(headers);

    await signal(headers, { type: 'beacon', meta: { device_id: 'radio-7' } });
    await signal(headers, { type: 'beacon' });
    await stopBeacon(headers, 'radio-7');
    const off = await client.waitForEvent('beacon_off');
    assert.deepEqual(eventOf(off), { type: 'beacon_off', payload: { device_id: 'radio-7', user_id: u.id, org_id: org } });
    assert.ok(Number.isSafeInteger(off.id) && off.id! > 0);

    await stopBeacon(headers, 'radio-7'); // already off: no event
    await stopBeacon(headers, 'never-on'); // never on: no event
    await stopBeacon(headers); // the user-keyed device
    const userOff = await client.waitForEvent('beacon_off', (p) => p.device_id === null);
    assert.deepEqual(payloadOf(userOff), { device_id: null, user_id: u.id, org_id: org });
    await signal(headers, { type: 'note', note: 'marker' });
    await client.waitForEvent('signal.note', withNote('marker'));
    assert.deepEqual(summary(client), [
      ['signal.beacon', 'radio-7'],
      ['signal.beacon', String(u.id)],
      ['beacon_off', 'radio-7'],
      ['beacon_off', String(u.id)],
      ['signal.note', 'marker'],
    ]);
  });

  test('a beacon older than the stored position is not broadcast (but answers 201)', async () => {
    const u = await signUp(t.app);
    const headers = { cookie: u.cookie };
    const client = await stream(headers);
    const at = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
    await signal(headers, { type: 'beacon', lat: 1, lng: 1, meta: { device_id: 'd' }, recorded_at: at(-60_000) });
    const stale = await signal(headers, { type: 'beacon', lat: 2, lng: 2, meta: { device_id: 'd' }, recorded_at: at(-120_000) });
    assert.equal(stale.Id, null);
    await signal(headers, { type: 'beacon', lat: 3, lng: 3, meta: { device_id: 'd' } });
    await client.waitForEvent('signal.beacon', (p) => p.lat === 3);
    assert.deepEqual(
      client.events.filter((e) => e.type === 'signal.beacon').map((e) => (e.payload as Payload).lat),
      [1, 3],
    );
  });

  test("only members of the signal's org receive it", async () => {
    const crew = await signUp(t.app, { name: 'Crew Two' });
    const outsider = await signUp(t.app, { name: 'Outsider' });
    const shared = await bossOrg('Members Only', crew);
    const [crewOwnOrg] = (await orgIdsOf(crew)).filter((id) => id !== shared.id);
    const bossStream = await stream({ cookie: shared.boss.cookie });
    const crewStream = await stream({ cookie: crew.cookie });
    const outsiderStream = await stream({ cookie: outsider.cookie });

    await signal({ cookie: shared.boss.cookie }, { type: 'note', note: 'boss to shared', org_id: shared.id });
    await signal({ cookie: crew.cookie }, { type: 'beacon', org_id: shared.id, meta: { device_id: 'crew-shared' } });
    await signal({ cookie: crew.cookie }, { type: 'note', note: 'crew own org', org_id: crewOwnOrg });
    await signal({ cookie: crew.cookie }, { type: 'alert', note: 'crew alert shared', org_id: shared.id });
    await stopBeacon({ cookie: crew.cookie }, 'crew-shared');
    await signal({ cookie: outsider.cookie }, { type: 'checkin', note: 'outsider marker' });
    await signal({ cookie: shared.boss.cookie }, { type: 'note', note: 'boss marker', org_id: shared.id });

    // Events leave in publish order: once a stream has the last event it can receive, it has all the earlier ones.
    await outsiderStream.waitForEvent('signal.checkin', withNote('outsider marker'));
    await crewStream.waitForEvent('signal.note', withNote('boss marker'));
    await bossStream.waitForEvent('signal.note', withNote('boss marker'));

    assert.deepEqual(summary(outsiderStream), [['signal.checkin', 'outsider marker']]);
    assert.deepEqual(summary(bossStream), [
      ['signal.note', 'boss to shared'],
      ['signal.beacon', 'crew-shared'],
      ['signal.alert', 'crew alert shared'],
      ['beacon_off', 'crew-shared'],
      ['signal.note', 'boss marker'],
    ]);
    assert.deepEqual(summary(crewStream), [
      ['signal.note', 'boss to shared'],
      ['signal.beacon', 'crew-shared'],
      ['signal.note', 'crew own org'],
      ['signal.alert', 'crew alert shared'],
      ['beacon_off', 'crew-shared'],
      ['signal.note', 'boss marker'],
    ]);
  });

  test('only streams of the same mode receive it: an sk_test_ stream sees test signals only, live streams never see them', async () => {
    const u = await signUp(t.app);
    const testKey = { 'x-api-key': (await createKey(t.app, u.cookie, 'test')).key };
    const liveKey = { 'x-api-key': (await createKey(t.app, u.cookie, 'live')).key };
    const cookie = { cookie: u.cookie };
    const testStream = await stream(testKey);
    const liveKeyStream = await stream(liveKey);
    const cookieStream = await stream(cookie);

    await signal(liveKey, { type: 'note', note: 'live 1' });
    await signal(testKey, { type: 'note', note: 'test 1' });
    await signal(testKey, { type: 'beacon', meta: { device_id: 'test-dev' } });
    await signal(cookie, { type: 'beacon', meta: { device_id: 'live-dev' } });
    await signal(testKey, { type: 'alert', note: 'test alert' });
    await stopBeacon(testKey, 'test-dev');
    await stopBeacon(cookie, 'live-dev');
    await signal(testKey, { type: 'capture', note: 'test last' });
    await signal(cookie, { type: 'checkin', note: 'live last' });

    await testStream.waitForEvent('signal.capture', withNote('test last'));
    for (const c of [liveKeyStream, cookieStream]) await c.waitForEvent('signal.checkin', withNote('live last'));

    assert.deepEqual(summary(testStream), [
      ['signal.note', 'test 1'],
      ['signal.beacon', 'test-dev'],
      ['signal.alert', 'test alert'],
      ['beacon_off', 'test-dev'],
      ['signal.capture', 'test last'],
    ]);
    for (const c of [liveKeyStream, cookieStream]) {
      assert.deepEqual(summary(c), [
        ['signal.note', 'live 1'],
        ['signal.beacon', 'live-dev'],
        ['beacon_off', 'live-dev'],
        ['signal.checkin', 'live last'],
      ]);
    }
    for (const e of testStream.events) {
      const p = e.payload as Payload | undefined;
      if (p && 'livemode' in p) assert.equal(p.livemode, false);
    }
  });

  test('a client reconnecting with Last-Event-ID receives what it missed, then live events', async () => {
    const u = await signUp(t.app);
    const headers = { cookie: u.cookie };
    const first = await stream(headers);
    await signal(headers, { type: 'note', note: 'before the gap' });
    const lastId = (await first.waitForEvent('signal.note', withNote('before the gap'))).id;
    assert.ok(lastId !== undefined && lastId > 0);
    await first.close();

    await signal(headers, { type: 'capture', note: 'missed capture' });
    await signal(headers, { type: 'beacon', meta: { device_id: 'gap-dev' } });
    await stopBeacon(headers, 'gap-dev');

    const second = await stream({ ...headers, 'last-event-id': String(lastId) });
    await second.waitForEvent('beacon_off');
    await signal(headers, { type: 'checkin', note: 'after reconnecting' });
    await second.waitForEvent('signal.checkin', withNote('after reconnecting'));
    const expected = [
      ['signal.capture', 'missed capture'],
      ['signal.beacon', 'gap-dev'],
      ['beacon_off', 'gap-dev'],
      ['signal.checkin', 'after reconnecting'],
    ];
    assert.deepEqual(summary(second), expected);
    assert.equal(second.frames[0]!.id, lastId, 'the connected frame carries the id the stream resumed from');
    const ids = second.frames.filter((f) => f.id !== undefined && eventOf(f)?.type !== 'connected').map((f) => f.id!);
    assert.equal(ids.length, 4);
    assert.ok(ids.every((id) => id > lastId));
    assert.deepEqual([...ids].sort((a, b) => a - b), ids);

    // The same through the query string.
    const viaQuery = await stream(headers, `/v1/signals/stream?last_event_id=${lastId}`);
    await viaQuery.waitForEvent('signal.checkin', withNote('after reconnecting'));
    assert.deepEqual(summary(viaQuery), expected);
  });

  test('sends heartbeat comments', async () => {
    const u = await signUp(t.app);
    const client = await stream({ cookie: u.cookie });
    const beat = await client.waitFor((f) => f.comment !== undefined, 2000);
    assert.equal(beat.comment, 'heartbeat');
    assert.match(beat.raw, /^:/);
    assert.equal(beat.data, undefined);
    assert.equal(beat.id, undefined);
  });
});
