import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { MINUTE } from '../../lib/clock.js';
import type { TestUser } from '../../../test/factories.js';
import { dispatchWorld, type DispatchWorld } from '../../../test/world.js';
import { boundingBox, haversineM } from './geo.js';
import type { Headers } from '../../../test/helpers.js';

interface Responder {
  user_id: number;
  user_name: string;
  device_id: string | null;
  lat: number;
  lng: number;
  last_seen_at: string;
  distance_m: number | null;
  open_assignments: number;
}

describe('geometry', () => {
  test('haversine: one degree of latitude, and a known city pair', () => {
    assert.equal(Math.round(haversineM(0, 0, 1, 0)), 111_195);
    // London to Paris, about 344 km great-circle.
    assert.ok(Math.abs(haversineM(51.5074, -0.1278, 48.8566, 2.3522) - 343_900) < 1_000);
  });

  test('the bounding box holds every point within its radius', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -89, max: 89, noNaN: true }),
        fc.double({ min: -179, max: 179, noNaN: true }),
        fc.double({ min: 10, max: 500_000, noNaN: true }),
        fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (lat, lng, radius, bearing, share) => {
          // A point at distance share*radius along `bearing` (spherical destination formula).
          const d = (share * radius) / 6_371_008.8;
          const φ1 = (lat * Math.PI) / 180;
          const φ2 = Math.asin(Math.sin(φ1) * Math.cos(d) + Math.cos(φ1) * Math.sin(d) * Math.cos(bearing));
          const λ2 = (lng * Math.PI) / 180 + Math.atan2(Math.sin(bearing) * Math.sin(d) * Math.cos(φ1), Math.cos(d) - Math.sin(φ1) * Math.sin(φ2));
          const pLat = (φ2 * 180) / Math.PI;
          const pLng = ((((λ2 * 180) / Math.PI + 540) % 360) - 180);
          const box = boundingBox(lat, lng, radius);
          return pLat >= box.minLat - 1e-9 && pLat <= box.maxLat + 1e-9 && pLng >= box.minLng - 1e-9 && pLng <= box.maxLng + 1e-9;
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('nearest responders', () => {
  let w: DispatchWorld;
  before(async () => {
    w = await dispatchWorld({ BEACON_TIMEOUT_MS: String(5 * MINUTE) });
  });
  after(() => w.close());

  const beacon = (headers: Headers, lat: number, lng: number, device = 'phone') =>
    w.ok(headers, 'POST', '/v1/signals', { type: 'beacon', lat, lng, meta: { device_id: device }, org_id: w.orgId });
  const responders = async (headers: Headers, id: number, query = '') =>
    (await w.ok<{ responders: Responder[] }>(headers, 'GET', `/v1/tickets/${id}/responders${query}`)).responders;
  const names = (rs: Responder[]) => rs.map((r) => r.user_name);

  test('members with a live position, nearest first, with great-circle distances; stale and other orgs left out', async () => {
    // Everyone beacons; then the clock passes the timeout and only some ping again.
    await beacon(w.as(w.admin), 10.0, 10.0);
    w.t.clock.advance(5 * MINUTE + 1);
    await beacon(w.as(w.ann), 0.02, 0.0); // ~2.2 km north of the incident
    await beacon(w.as(w.ben), 0.0, 0.01); // ~1.1 km east
    await beacon(w.as(w.owner), 0.1, 0.1);
    await w.ok(w.as(w.stranger), 'POST', '/v1/signals', { type: 'beacon', lat: 0, lng: 0 }); // their own org, right on the spot
    const incident = await w.incident(w.as(w.owner), { lat: 0, lng: 0 });
    const rs = await responders(w.as(w.owner), incident.Id);
    assert.deepEqual(names(rs), ['Ben Responder', 'Ann Responder', 'Olga Owner'], 'the admin is stale, the stranger is not a member');
    assert.equal(rs[0]!.distance_m, Math.round(haversineM(0, 0, 0, 0.01)));
    assert.equal(rs[1]!.distance_m, Math.round(haversineM(0, 0, 0.02, 0)));
    assert.deepEqual([rs[0]!.lat, rs[0]!.lng, rs[0]!.device_id, rs[0]!.user_id], [0, 0.01, 'phone', w.ben.id]);
    assert.equal(rs[0]!.open_assignments, 0);
    // A member (not only dispatchers) may ask; the answer is the same.
    assert.deepEqual(await responders(w.as(w.ann), incident.Id), rs);
    // The stale position returns once the admin pings again.
    await beacon(w.as(w.admin), 0.005, 0);
    assert.equal(names(await responders(w.as(w.owner), incident.Id))[0], 'Adam Admin');
  });

  test('limit, radius and open assignments', async () => {
    const incident = await w.incident(w.as(w.owner), { lat: 0, lng: 0 });
    const busy = await w.incident(w.as(w.owner), { title: 'Busy' });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${busy.Id}`, { assignee_id: w.ben.id });
    const rs = await responders(w.as(w.owner), incident.Id);
    assert.equal(rs.find((r) => r.user_id === w.ben.id)?.open_assignments, 1);
    assert.equal((await responders(w.as(w.owner), incident.Id, '?limit=2')).length, 2);
    const near = await responders(w.as(w.owner), incident.Id, '?within_m=2000');
    assert.deepEqual(names(near), ['Adam Admin', 'Ben Responder'], 'Ann (~2.2 km) and Olga are outside 2 km');
    assert.equal((await w.call(w.as(w.owner), 'GET', `/v1/tickets/${incident.Id}/responders?limit=0`)).statusCode, 422);
    assert.equal((await w.call(w.as(w.owner), 'GET', `/v1/tickets/${incident.Id}/responders?within_m=-5`)).statusCode, 422);
  });

  test('one row per member: their nearest live device, or without an incident position their most recent', async () => {
    await beacon(w.as(w.ann), 0.01, 0, 'tablet');
    w.t.clock.advance(1000);
    await beacon(w.as(w.ann), 0.03, 0, 'phone');
    const placed = await w.incident(w.as(w.owner), { lat: 0, lng: 0 });
    const mine = (await responders(w.as(w.owner), placed.Id)).filter((r) => r.user_id === w.ann.id);
    assert.deepEqual(mine.map((r) => [r.device_id, r.lat]), [['tablet', 0.01]]);
    const unplaced = await w.incident(w.as(w.owner));
    const recent = (await responders(w.as(w.owner), unplaced.Id)).filter((r) => r.user_id === w.ann.id);
    assert.deepEqual(recent.map((r) => [r.device_id, r.lat]), [['phone', 0.03]]);
    await beacon(w.as(w.ann), 0.03, 0, 'tablet'); // back where she is, for the next tests
  });

  test('the growing search radius finds far responders and stays exact: the nearest are never missed', async () => {
    const incident = await w.incident(w.as(w.owner), { lat: 0, lng: 0 });
    // Everyone is within a few km except the ones placed far below: the first 5 km box holds too few for limit=5.
    await beacon(w.as(w.admin), 30, 30); // ~4,600 km away
    const rs = await responders(w.as(w.owner), incident.Id, '?limit=5');
    const distances = rs.map((r) => r.distance_m!);
    assert.deepEqual(distances, [...distances].sort((a, b) => a - b));
    assert.equal(rs.at(-1)?.user_name, 'Adam Admin');
    assert.equal(rs.at(-1)?.distance_m, Math.round(haversineM(0, 0, 30, 30)));
    await beacon(w.as(w.admin), 0.005, 0);
  });

  test('an incident without a position lists the same members by last seen, distance null', async () => {
    const incident = await w.incident(w.as(w.owner));
    w.t.clock.advance(1000);
    await beacon(w.as(w.owner), 0.1, 0.1);
    const rs = await responders(w.as(w.owner), incident.Id);
    assert.equal(rs[0]!.user_name, 'Olga Owner');
    assert.ok(rs.every((r) => r.distance_m === null));
    const seen = rs.map((r) => r.last_seen_at);
    assert.deepEqual(seen, [...seen].sort().reverse());
    assert.equal(new Set(rs.map((r) => r.user_id)).size, rs.length);
  });

  test('test mode sees test beacons only; other orgs and modes get 404', async () => {
    const live = await w.incident(w.as(w.owner), { lat: 0, lng: 0 });
    const testIncident = await w.incident(w.testKey, { lat: 0, lng: 0 });
    assert.deepEqual(await responders(w.testKey, testIncident.Id), []);
    await beacon(w.testKey, 0.001, 0, 'test-phone');
    assert.deepEqual((await responders(w.testKey, testIncident.Id)).map((r) => r.device_id), ['test-phone']);
    assert.equal((await w.call(w.testKey, 'GET', `/v1/tickets/${live.Id}/responders`)).statusCode, 404);
    assert.equal((await w.call(w.as(w.stranger), 'GET', `/v1/tickets/${live.Id}/responders`)).statusCode, 404);
    assert.equal((await w.t.app.inject({ url: `/v1/tickets/${live.Id}/responders` })).statusCode, 401);
  });

  test('a member who left the org is not a responder', async () => {
    const leaver: TestUser = w.ben;
    const incident = await w.incident(w.as(w.owner), { lat: 0, lng: 0 });
    await beacon(w.as(leaver), 0, 0.001);
    assert.ok((await responders(w.as(w.owner), incident.Id)).some((r) => r.user_id === leaver.id));
    await w.ok(w.as(w.owner), 'DELETE', `/v1/orgs/${w.orgSlug}/members/${leaver.id}`);
    assert.ok(!(await responders(w.as(w.owner), incident.Id)).some((r) => r.user_id === leaver.id));
  });
});
