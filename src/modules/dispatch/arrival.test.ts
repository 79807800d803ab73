import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { restartedContext, secondInstance, testDialect, type Headers } from '../../../test/helpers.js';
import { createDevice, basic, pathOf } from '../../../test/trackers-kit.js';
import { dispatchWorld, type DispatchWorld, type TimelineView } from '../../../test/world.js';

// Arrival and departure from the assignee's live position (issue #38, docs/dispatch.md).
// The incident stands at (0, 0); 0.001° of latitude is about 111 m.
describe('arrival and departure from position', () => {
  let w: DispatchWorld;
  before(async () => {
    w = await dispatchWorld();
  });
  after(() => w.close());

  const beacon = (headers: Headers, lat: number, lng: number, accuracy?: number, device = 'phone') =>
    w.ok(headers, 'POST', '/v1/signals', { type: 'beacon', lat, lng, meta: { device_id: device }, org_id: w.orgId, ...(accuracy === undefined ? {} : { accuracy }) });
  const settle = () => w.t.ctx.arrival.idle();
  async function assigned(fields: object = {}) {
    const incident = await w.incident(w.as(w.owner), { title: 'Hydrant leaking', lat: 0, lng: 0, ...fields });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { assignee_id: w.ann.id });
    return incident.Id;
  }
  const events = async (id: number): Promise<TimelineView[]> => (await w.timeline(w.as(w.owner), id)).filter((e) => ['on_scene', 'departed', 'on_scene_undone', 'acknowledged'].includes(e.type));
  const kinds = async (id: number) => (await events(id)).map((e) => e.type);

  test('in within the radius: on_scene {source: position} and acknowledged as a tap would; out past radius + accuracy: departed; no flapping at the edge', async () => {
    const id = await assigned();
    const view = await w.ok<{ arrival_radius_m: number }>(w.as(w.owner), 'GET', `/v1/tickets/${id}`);
    assert.equal(view.arrival_radius_m, 150, 'the default radius, shown on the incident');
    await beacon(w.as(w.ann), 0.01, 0, 10); // 1.1 km away
    await settle();
    assert.deepEqual(await kinds(id), []);
    await beacon(w.as(w.ann), 0.0013, 0, 10); // 145 m: inside
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene']);
    const [ack, arrived] = await events(id);
    assert.equal(ack!.data.via, 'position');
    assert.deepEqual(arrived!.data, { source: 'position', lat: 0.0013, lng: 0, accuracy: 10 });
    assert.equal(arrived!.actor?.user_id, w.ann.id);
    assert.equal((await w.ok<{ status: string }>(w.as(w.owner), 'GET', `/v1/tickets/${id}`)).status, 'in_progress');

    await beacon(w.as(w.ann), 0.0001, 0, 5); // still inside: nothing new
    await beacon(w.as(w.ann), 0.0015, 0, 20); // 167 m: past the radius, within radius + accuracy (170 m): nothing
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene'], 'no departure inside the accuracy band');
    await beacon(w.as(w.ann), 0.0016, 0, 500); // 178 m but accuracy worse than the radius: decides nothing
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene'], 'a poor fix is ignored');
    await beacon(w.as(w.ann), 0.0016, 0, 20); // 178 m > 170 m: departed
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene', 'departed']);
    assert.deepEqual((await events(id)).at(-1)!.data, { source: 'position', lat: 0.0016, lng: 0, accuracy: 20 });
    await beacon(w.as(w.ann), 0.0015, 0, 20); // back to 167 m: outside the radius, not arrived again
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene', 'departed']);
    await beacon(w.as(w.ann), 0.0012, 0, 20); // 133 m: arrived again (already acknowledged)
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene', 'departed', 'on_scene']);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${id}`, { status: 'resolved' });
  });

  test('a poor fix inside decides nothing; someone not assigned decides nothing; a resolved incident is no longer watched', async () => {
    const id = await assigned();
    await beacon(w.as(w.ann), 0, 0, 151);
    await beacon(w.as(w.ben), 0, 0, 5);
    await settle();
    assert.deepEqual(await kinds(id), []);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${id}`, { status: 'resolved' });
    await beacon(w.as(w.ann), 0, 0, 5);
    await settle();
    assert.deepEqual(await kinds(id), []);
  });

  test('the cache follows the bus: a new assignment, then a PATCH of the radius, decide the next fix without a restart', async () => {
    await beacon(w.as(w.ben), 0.5, 0.5, 5); // Ben's cache is loaded (nothing assigned)
    await settle();
    const incident = await w.incident(w.as(w.owner), { title: 'Fallen tree', lat: 0, lng: 0, arrival_radius_m: 100 });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { assignee_id: w.ben.id });
    await beacon(w.as(w.ben), 0.0012, 0, 5); // 133 m: outside 100 m
    await settle();
    assert.deepEqual(await kinds(incident.Id), []);
    const patched = await w.ok<{ arrival_radius_m: number }>(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { arrival_radius_m: 200 });
    assert.equal(patched.arrival_radius_m, 200);
    await beacon(w.as(w.ben), 0.0012, 0.00001, 5); // the same place: now inside
    await settle();
    assert.deepEqual(await kinds(incident.Id), ['acknowledged', 'on_scene']);
  });

  test('422 for a radius out of 10..50000, on create and PATCH', async () => {
    for (const r of [9, 50_001]) {
      assert.equal((await w.call(w.as(w.owner), 'POST', '/v1/incidents', { title: 'x', arrival_radius_m: r })).statusCode, 422);
    }
    const incident = await w.incident(w.as(w.owner), { title: 'x' });
    assert.equal((await w.call(w.as(w.owner), 'PATCH', `/v1/incidents/${incident.Id}`, { arrival_radius_m: 9 })).statusCode, 422);
  });

  test('undo: the person takes back an automatic arrival (on_scene_undone), once; a tapped arrival is not undone', async () => {
    const id = await assigned();
    await beacon(w.as(w.ann), 0, 0, 5);
    await settle();
    const arrived = (await events(id)).find((e) => e.type === 'on_scene')!;
    const undone = await w.ok<TimelineView>(w.as(w.ann), 'POST', `/v1/tickets/${id}/arrival/undo`);
    assert.equal(undone.type, 'on_scene_undone');
    assert.deepEqual(undone.data, { event_id: arrived.id });
    assert.equal((await w.call(w.as(w.ann), 'POST', `/v1/tickets/${id}/arrival/undo`)).statusCode, 409, 'already undone');
    assert.equal((await w.call(w.as(w.ben), 'POST', `/v1/tickets/${id}/arrival/undo`)).statusCode, 403, 'not the assignee');
    await w.ok(w.as(w.ann), 'POST', `/v1/tickets/${id}/progress`, { state: 'on_scene' });
    assert.equal((await w.call(w.as(w.ann), 'POST', `/v1/tickets/${id}/arrival/undo`)).statusCode, 409, 'a tap is not an automatic arrival');
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${id}`, { status: 'resolved' });
  });

  test('from the tracker paths: OsmAnd and OwnTracks fixes arrive and depart alike', async () => {
    const id = await assigned();
    const van = await createDevice(w.t, w.as(w.ann), { name: 'Ann van', org_id: w.orgId });
    const now = () => Math.floor(w.t.clock.now().getTime() / 1000);
    const osmand = async (lat: number, acc: number) => {
      w.t.clock.advance(1000);
      const res = await w.t.app.inject({ method: 'GET', url: `/v1/trackers/osmand?id=${van.token}&timestamp=${now()}&lat=${lat}&lon=0&accuracy=${acc}` });
      assert.equal(res.statusCode, 200, res.body);
    };
    await osmand(0.001, 10);
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene']);
    await osmand(0.003, 10);
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene', 'departed']);

    const phone = await createDevice(w.t, w.as(w.ann), { name: 'Ann phone', org_id: w.orgId });
    const owntracks = async (lat: number, acc: number) => {
      w.t.clock.advance(1000);
      const res = await w.t.app.inject({ method: 'POST', url: pathOf(phone.owntracks_url), headers: { 'content-type': 'application/json', authorization: basic('ann', phone.token) }, payload: { _type: 'location', lat, lon: 0, tst: now(), acc } });
      assert.equal(res.statusCode, 200, res.body);
    };
    await owntracks(0.0005, 8);
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene', 'departed', 'on_scene']);
    await owntracks(0.002, 8);
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene', 'departed', 'on_scene', 'departed']);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${id}`, { status: 'resolved' });
  });

  test('after a restart the presence is read back: an arrival already recorded is not recorded again', async () => {
    const id = await assigned();
    await beacon(w.as(w.ann), 0, 0, 5);
    await settle();
    assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene']);
    const restarted = await restartedContext(w.t);
    try {
      restarted.positions.observe(restarted, { orgId: w.orgId, mode: 'live', userId: w.ann.id, deviceId: 'phone', lat: 0.0002, lng: 0, accuracy: 5, at: w.t.clock.now().toISOString() });
      await restarted.arrival.idle();
      assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene']);
    } finally {
      await restarted.close();
    }
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${id}`, { status: 'resolved' });
  });

  if (testDialect === 'postgres')
    test('exactly once across two instances: the same arrival seen by both records one on_scene', async () => {
      const id = await assigned();
      const other = await secondInstance(w.t);
      try {
        const fix = { orgId: w.orgId, mode: 'live' as const, userId: w.ann.id, deviceId: 'phone', lat: 0.0001, lng: 0, accuracy: 5, at: w.t.clock.now().toISOString() };
        w.t.ctx.positions.observe(w.t.ctx, fix);
        other.ctx.positions.observe(other.ctx, fix);
        await Promise.all([w.t.ctx.arrival.idle(), other.ctx.arrival.idle()]);
        assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene']);
        const away = { ...fix, lat: 0.01 };
        other.ctx.positions.observe(other.ctx, away);
        w.t.ctx.positions.observe(w.t.ctx, away);
        await Promise.all([w.t.ctx.arrival.idle(), other.ctx.arrival.idle()]);
        assert.deepEqual(await kinds(id), ['acknowledged', 'on_scene', 'departed']);
      } finally {
        await other.close();
      }
    });
});
