// Schedules through the API on both databases: create, read, edit, delete; who may do what; every
// bad input the issue names; edits that apply from their moment; deleted schedules keep their history.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createKey, signUp } from '../../../test/factories.js';
import { testDialect, type Headers } from '../../../test/helpers.js';
import { dispatchWorld, signInAgain, type DispatchWorld } from '../../../test/world.js';
import { finalShifts, hoursOnCall, whoIsOnCall } from './index.js';

interface LayerOut {
  id: string;
  name: string;
  start: string;
  turn: { unit: string; length: number };
  users: number[];
  restrictions: unknown[];
}
interface ScheduleOut {
  id: number;
  slug: string;
  name: string;
  time_zone: string;
  layers: LayerOut[];
  layers_effective_from: string;
  gaps: { start: string; end: string }[];
}
interface ShiftOut {
  user_id: number;
  user_name: string;
  start: string;
  end: string;
  source: { type: string; layer_id?: string; override_id?: number };
}

describe('on-call schedules: the API', () => {
  let w: DispatchWorld;
  let base: string;
  let member: Headers;
  let admin: Headers;
  before(async () => {
    w = await dispatchWorld();
    w.t.clock.set('2026-03-02T12:00:00.000Z'); // a Monday
    await signInAgain(w); // sessions last 14 days: the ones made at the world's start have ended
    base = `/v1/orgs/${w.orgSlug}/schedules`;
    member = w.as(w.ann);
    admin = w.as(w.admin);
  });
  after(() => w.close());

  const weekly = (users: number[], start = '2026-03-02T09:00') => ({ name: 'Weekly', start, turn: { unit: 'week', length: 1 }, users });
  const create = (payload: object, by: Headers = admin) => w.ok<ScheduleOut>(by, 'POST', base, { name: 'Water network', time_zone: 'Europe/London', layers: [], ...payload });
  /** The `field` of a 422's details, in order. */
  async function fields(method: 'POST' | 'PATCH' | 'GET' | 'DELETE', url: string, payload?: object): Promise<string[]> {
    const res = await w.call(admin, method, url, payload);
    assert.equal(res.statusCode, 422, `${method} ${url}: ${res.body}`);
    const b = res.json<{ code: string; details: { field: string }[] }>();
    assert.equal(b.code, 'validation_failed');
    return b.details.map((d) => d.field);
  }

  test('an admin creates a schedule with two layers: 201, ids given, gaps of the next 14 days, readable by id and slug', async () => {
    const s = await create({
      name: 'Water network',
      description: 'Burst mains and pumping stations',
      layers: [
        weekly([w.ann.id, w.ben.id]),
        { name: 'Nights', start: '2026-03-02T00:00', turn: { unit: 'day', length: 1 }, users: [w.ben.id], restrictions: [{ days: ['mon', 'tue'], start_time: '22:00', end_time: '06:00' }] },
      ],
    });
    assert.equal(s.slug, 'water-network');
    assert.equal(s.time_zone, 'Europe/London');
    assert.equal(s.layers.length, 2);
    assert.match(s.layers[0]!.id, /^[A-Za-z0-9_-]+$/);
    assert.notEqual(s.layers[0]!.id, s.layers[1]!.id);
    assert.equal(s.layers[0]!.name, 'Weekly');
    assert.deepEqual(s.layers[1]!.restrictions, [{ days: ['mon', 'tue'], start_time: '22:00', end_time: '06:00' }]);
    assert.equal(s.layers_effective_from, '2026-03-02T12:00:00.000Z');
    assert.deepEqual(s.gaps, [], 'the weekly layer covers everything from its start');
    assert.deepEqual(await w.ok(member, 'GET', `${base}/${s.id}`), s);
    assert.deepEqual(await w.ok(member, 'GET', `${base}/water-network`), s);
    const list = await w.ok<{ schedules: ScheduleOut[] }>(member, 'GET', base);
    assert.ok(list.schedules.some((x) => x.id === s.id));
  });

  test('who is on call: the current shift with its bounds and source; the org view says who is next', async () => {
    const s = await create({ name: 'Pumps', layers: [{ name: 'Days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] }] });
    const now = await w.ok<{ at: string; on_call: ShiftOut[] }>(member, 'GET', `${base}/${s.slug}/on-call`);
    assert.equal(now.at, '2026-03-02T12:00:00.000Z');
    assert.deepEqual(now.on_call, [{ user_id: w.ann.id, user_name: 'Ann Responder', start: '2026-03-02T12:00:00.000Z', end: '2026-03-03T09:00:00.000Z', source: { type: 'layer', layer_id: s.layers[0]!.id } }]);
    const later = await w.ok<{ on_call: ShiftOut[] }>(member, 'GET', `${base}/${s.slug}/on-call?at=2026-03-04T10:00:00Z`);
    assert.deepEqual(later.on_call.map((x) => [x.user_id, x.start, x.end]), [[w.ann.id, '2026-03-04T09:00:00.000Z', '2026-03-05T09:00:00.000Z']]);
    // Before the schedule existed nobody was on call in it.
    assert.deepEqual((await w.ok<{ on_call: ShiftOut[] }>(member, 'GET', `${base}/${s.slug}/on-call?at=2026-03-01T10:00:00Z`)).on_call, []);

    const org = await w.ok<{ schedules: { id: number; on_call: ShiftOut[]; next: ShiftOut[] }[] }>(member, 'GET', `/v1/orgs/${w.orgSlug}/on-call`);
    const mine = org.schedules.find((x) => x.id === s.id)!;
    assert.deepEqual(mine.on_call.map((x) => x.user_id), [w.ann.id]);
    assert.deepEqual(mine.next.map((x) => [x.user_id, x.start, x.end]), [[w.ben.id, '2026-03-03T09:00:00.000Z', '2026-03-04T09:00:00.000Z']]);
  });

  test('shifts: the final schedule in time order, layers, restrictions and overrides resolved and merged', async () => {
    const s = await create({
      name: 'Sewers',
      layers: [
        { name: 'All week', start: '2026-03-02T09:00', turn: { unit: 'week', length: 1 }, users: [w.ann.id] },
        { name: 'Evenings', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ben.id], restrictions: [{ start_time: '18:00', end_time: '22:00' }] },
      ],
    });
    const o = await w.ok<{ id: number; start: string; end: string }>(admin, 'POST', `${base}/${s.id}/overrides`, { user_id: w.admin.id, start: '2026-03-03T10:00:00Z', end: '2026-03-03T12:00:00Z' });
    const r = await w.ok<{ shifts: ShiftOut[]; gaps: unknown[] }>(member, 'GET', `${base}/${s.id}/shifts?from=2026-03-03T00:00:00Z&to=2026-03-04T00:00:00Z`);
    const [all, eve] = s.layers.map((l) => l.id);
    assert.deepEqual(
      r.shifts.map((x) => [x.user_name, x.start.slice(11, 16), x.end.slice(11, 16), x.source.type === 'layer' ? x.source.layer_id : x.source.override_id]),
      [
        ['Ann Responder', '00:00', '10:00', all],
        ['Adam Admin', '10:00', '12:00', o.id],
        ['Ann Responder', '12:00', '18:00', all],
        ['Ben Responder', '18:00', '22:00', eve],
        ['Ann Responder', '22:00', '00:00', all],
      ],
    );
    assert.deepEqual(r.gaps, []);
    const timeline = await w.ok<{ layers: { id: string; shifts: ShiftOut[] }[]; overrides: { id: number }[]; final: ShiftOut[] }>(member, 'GET', `${base}/${s.id}/timeline?from=2026-03-03T00:00:00Z&to=2026-03-04T00:00:00Z`);
    assert.deepEqual(timeline.layers.map((l) => [l.id, l.shifts.length]), [[all, 1], [eve, 1]]);
    assert.deepEqual(timeline.overrides.map((x) => x.id), [o.id]);
    assert.deepEqual(timeline.final, r.shifts);
  });

  test('overrides: listed by range, a start in the past starts now, deleting one ends it from now on', async () => {
    const s = await create({ name: 'Reservoirs', layers: [weekly([w.ann.id])] });
    const url = `${base}/${s.id}/overrides`;
    const early = await w.ok<{ id: number; user_id: number; start: string; end: string; created_at: string }>(admin, 'POST', url, { user_id: w.ben.id, start: '2026-03-02T10:00:00Z', end: '2026-03-02T14:00:00Z' });
    assert.deepEqual(early, { id: early.id, user_id: w.ben.id, start: '2026-03-02T12:00:00.000Z', end: '2026-03-02T14:00:00.000Z', created_at: '2026-03-02T12:00:00.000Z' });
    const later = await w.ok<{ id: number }>(admin, 'POST', url, { user_id: w.admin.id, start: '2026-03-10T08:00:00+01:00', end: '2026-03-10T20:00:00+01:00' });
    const listed = (q: string) => w.ok<{ overrides: { id: number }[] }>(member, 'GET', `${url}${q}`).then((x) => x.overrides.map((o) => o.id));
    assert.deepEqual(await listed(''), [early.id, later.id]);
    assert.deepEqual(await listed('?from=2026-03-05T00:00:00Z&to=2026-03-12T00:00:00Z'), [later.id]);

    w.t.clock.set('2026-03-02T13:00:00.000Z');
    assert.deepEqual(await w.ok(admin, 'DELETE', `${url}/${early.id}`), { id: early.id, deleted: true });
    assert.equal((await w.call(admin, 'DELETE', `${url}/${early.id}`)).statusCode, 404);
    assert.deepEqual(await listed(''), [later.id]);
    // It counted from 12:00 until its deletion at 13:00: that hour stays in the history.
    const r = await w.ok<{ shifts: ShiftOut[] }>(member, 'GET', `${base}/${s.id}/shifts?from=2026-03-02T12:00:00Z&to=2026-03-02T15:00:00Z`);
    assert.deepEqual(r.shifts.map((x) => [x.user_id, x.start.slice(11, 16), x.end.slice(11, 16)]), [[w.ben.id, '12:00', '13:00'], [w.ann.id, '13:00', '15:00']]);
    // An override of another schedule is not this one's.
    const other = await create({ name: 'Other', layers: [] });
    assert.equal((await w.call(admin, 'DELETE', `${base}/${other.id}/overrides/${later.id}`)).statusCode, 404);
    w.t.clock.set('2026-03-02T12:00:00.000Z');
  });

  test('an edit applies from its moment: earlier questions keep their answers', async () => {
    const s = await create({ name: 'Edits', layers: [{ id: 'main', name: 'Days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] }] });
    const range = `${base}/${s.id}/shifts?from=2026-03-02T12:00:00Z&to=2026-03-06T09:00:00Z`;
    const before = await w.ok<{ shifts: ShiftOut[] }>(member, 'GET', range);
    w.t.clock.set('2026-03-04T12:00:00.000Z');
    const edited = await w.ok<ScheduleOut>(admin, 'PATCH', `${base}/${s.id}`, { layers: [{ id: 'main', name: 'Days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.admin.id] }] });
    assert.equal(edited.layers_effective_from, '2026-03-04T12:00:00.000Z');
    assert.deepEqual(edited.layers[0]!.users, [w.admin.id]);
    const after = await w.ok<{ shifts: ShiftOut[] }>(member, 'GET', range);
    const upTo = (list: ShiftOut[], t: string) => list.filter((x) => x.start < t).map((x) => ({ ...x, end: x.end < t ? x.end : t }));
    assert.deepEqual(upTo(after.shifts, '2026-03-04T12:00:00.000Z'), upTo(before.shifts, '2026-03-04T12:00:00.000Z'));
    assert.deepEqual(after.shifts.filter((x) => x.start >= '2026-03-04T12:00:00.000Z').map((x) => x.user_id), [w.admin.id]);
    // Who was on call on Tuesday at 10:00 (turn 1: Ben) is still Ben; the public surface says the same.
    const tue = Date.parse('2026-03-03T10:00:00Z');
    assert.equal((await whoIsOnCall(w.t.ctx, w.orgId, s.id, tue))?.userId, w.ben.id);
    assert.equal((await whoIsOnCall(w.t.ctx, w.orgId, s.id, Date.parse('2026-03-05T10:00:00Z')))?.userId, w.admin.id);
    // Renaming needs no new version.
    const renamed = await w.ok<ScheduleOut>(admin, 'PATCH', `${base}/${s.id}`, { name: 'Edited' });
    assert.equal(renamed.layers_effective_from, '2026-03-04T12:00:00.000Z');
    w.t.clock.set('2026-03-02T12:00:00.000Z');
  });

  test('a deleted schedule answers 404 (its feed too) and frees its slug, but keeps its history', async () => {
    const s = await create({ name: 'Doomed', layers: [weekly([w.ann.id])] });
    const feed = (await w.ok<{ url: string }>(member, 'GET', `${base}/${s.id}/feed`)).url;
    w.t.clock.set('2026-03-03T12:00:00.000Z');
    assert.deepEqual(await w.ok(admin, 'DELETE', `${base}/doomed`), { id: s.id, deleted: true });
    for (const path of ['', '/on-call', '/shifts', '/overrides', '/feed', '/timeline']) assert.equal((await w.call(member, 'GET', `${base}/${s.id}${path}`)).statusCode, 404, path);
    assert.equal((await w.call(admin, 'PATCH', `${base}/${s.id}`, { name: 'Back' })).statusCode, 404);
    assert.equal((await w.call({}, 'GET', new URL(feed).pathname)).statusCode, 404);
    const { shifts } = await finalShifts(w.t.ctx, w.orgId, s.id, Date.parse('2026-03-02T12:00:00Z'), Date.parse('2026-03-04T00:00:00Z'));
    assert.deepEqual(shifts.map((x) => [x.userId, new Date(x.start).toISOString(), new Date(x.end).toISOString()]), [[w.ann.id, '2026-03-02T12:00:00.000Z', '2026-03-03T12:00:00.000Z']]);
    assert.equal((await create({ name: 'Doomed' })).slug, 'doomed');
    w.t.clock.set('2026-03-02T12:00:00.000Z');
  });

  test('a member who leaves the org: their turns become gaps from that moment, reported as such', async () => {
    const { ben } = w;
    const s = await create({ name: 'Leavers', layers: [{ name: 'Days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, ben.id] }] });
    w.t.clock.set('2026-03-03T15:00:00.000Z'); // Ben's turn (3 March 09:00 to 4 March 09:00)
    assert.equal((await w.ok<{ on_call: ShiftOut[] }>(member, 'GET', `${base}/${s.id}/on-call`)).on_call[0]?.user_id, ben.id);
    await w.ok(w.as(w.owner), 'DELETE', `/v1/orgs/${w.orgSlug}/members/${ben.id}`, undefined, 200);
    try {
      assert.deepEqual((await w.ok<{ on_call: ShiftOut[] }>(member, 'GET', `${base}/${s.id}/on-call`)).on_call, []);
      const got = await w.ok<ScheduleOut>(member, 'GET', `${base}/${s.id}`);
      assert.deepEqual(got.gaps.slice(0, 2), [
        { start: '2026-03-03T15:00:00.000Z', end: '2026-03-04T09:00:00.000Z' },
        { start: '2026-03-05T09:00:00.000Z', end: '2026-03-06T09:00:00.000Z' },
      ]);
      // Earlier, he was on call: the history keeps him.
      assert.equal((await whoIsOnCall(w.t.ctx, w.orgId, s.id, Date.parse('2026-03-03T10:00:00Z')))?.userId, ben.id);
      // He can no longer be put on a layer or an override.
      assert.deepEqual(await fields('POST', `${base}/${s.id}/overrides`, { user_id: ben.id, start: '2026-03-05T00:00:00Z', end: '2026-03-06T00:00:00Z' }), ['user_id']);
    } finally {
      await w.ok(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/members`, { email: ben.email, role: 'member' });
      w.t.clock.set('2026-03-02T12:00:00.000Z');
    }
  });

  test('an account deleted: its turns become gaps from then; its past shifts stay, as "Deleted user"', async () => {
    const gone = await signUp(w.t.app, { name: 'Gil Gone' });
    await w.ok(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/members`, { email: gone.email, role: 'member' });
    const s = await create({ name: 'Departures', layers: [{ name: 'Days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [gone.id, w.ann.id] }] });
    w.t.clock.set('2026-03-02T18:00:00.000Z');
    const res = await w.call({ cookie: gone.cookie }, 'DELETE', '/v1/auth/me', { password: gone.password });
    assert.equal(res.statusCode, 200, res.body);
    const r = await w.ok<{ shifts: ShiftOut[]; gaps: { start: string; end: string }[] }>(member, 'GET', `${base}/${s.id}/shifts?from=2026-03-02T12:00:00Z&to=2026-03-05T09:00:00Z`);
    assert.deepEqual(r.shifts.map((x) => [x.user_id, x.user_name, x.start, x.end]), [
      [gone.id, 'Deleted user', '2026-03-02T12:00:00.000Z', '2026-03-02T18:00:00.000Z'],
      [w.ann.id, 'Ann Responder', '2026-03-03T09:00:00.000Z', '2026-03-04T09:00:00.000Z'],
    ]);
    assert.deepEqual(r.gaps, [
      { start: '2026-03-02T18:00:00.000Z', end: '2026-03-03T09:00:00.000Z' },
      { start: '2026-03-04T09:00:00.000Z', end: '2026-03-05T09:00:00.000Z' },
    ]);
    w.t.clock.set('2026-03-02T12:00:00.000Z');
  });

  test('hours on call per person for reports, deleted schedules included', async () => {
    const theirs = `/v1/orgs/${w.stranger.slug}/schedules`;
    const mine = w.as(w.stranger);
    const s = await w.ok<ScheduleOut>(mine, 'POST', theirs, { name: 'Solo', time_zone: 'UTC', layers: [{ start: '2026-03-02T00:00', turn: { unit: 'day', length: 1 }, users: [w.stranger.id] }] });
    w.t.clock.set('2026-03-04T12:00:00.000Z');
    await w.ok(mine, 'DELETE', `${theirs}/${s.id}`);
    const orgId = (await w.ok<{ orgs: { id: number; primary: boolean }[] }>(mine, 'GET', '/v1/orgs')).orgs.find((o) => o.primary)!.id;
    const hours = await hoursOnCall(w.t.ctx, orgId, Date.parse('2026-03-01T00:00:00Z'), Date.parse('2026-03-08T00:00:00Z'));
    assert.deepEqual([...hours], [[w.stranger.id, 48]], 'from creation (2 March 12:00) to deletion (4 March 12:00)');
    w.t.clock.set('2026-03-02T12:00:00.000Z');
  });

  test('your shifts across all your orgs, each with its schedule', async () => {
    const s = await create({ name: 'Mine', layers: [{ name: 'Ben only', start: '2026-03-02T09:00', turn: { unit: 'day', length: 2 }, users: [w.ben.id, w.admin.id] }] });
    const mine = await w.ok<{ shifts: (ShiftOut & { schedule: { id: number; slug: string; org_slug: string } })[] }>(w.as(w.ben), 'GET', '/v1/auth/me/shifts?from=2026-03-02T00:00:00Z&to=2026-03-09T00:00:00Z');
    const here = mine.shifts.filter((x) => x.schedule.id === s.id);
    assert.deepEqual(here.map((x) => [x.start, x.end]), [['2026-03-02T12:00:00.000Z', '2026-03-04T09:00:00.000Z'], ['2026-03-06T09:00:00.000Z', '2026-03-08T09:00:00.000Z']]);
    assert.deepEqual(here[0]!.schedule, { id: s.id, slug: s.slug, name: 'Mine', time_zone: 'Europe/London', org_id: w.orgId, org_slug: w.orgSlug });
    assert.ok(mine.shifts.every((x) => x.user_id === w.ben.id));
  });

  test('who may do what: members read, admins and owners write, a test key reads and writes, other orgs get 404', async () => {
    const s = await create({ name: 'Access', layers: [weekly([w.ann.id])] });
    const one = `${base}/${s.id}`;
    for (const [method, url, payload] of [
      ['POST', base, { name: 'No', time_zone: 'UTC', layers: [] }],
      ['PATCH', one, { name: 'No' }],
      ['DELETE', one, undefined],
      ['POST', `${one}/overrides`, { user_id: w.ann.id, start: '2026-03-05T00:00:00Z', end: '2026-03-06T00:00:00Z' }],
      ['POST', `${one}/feed/rotate`, undefined],
    ] as const) {
      assert.equal((await w.call(member, method, url, payload)).statusCode, 403, `${method} ${url}`);
      assert.equal((await w.call(w.as(w.stranger), method, url, payload)).statusCode, 404, `${method} ${url} (stranger)`);
      assert.equal((await w.call({}, method, url, payload)).statusCode, 401, `${method} ${url} (anonymous)`);
    }
    for (const path of ['', '/on-call', '/shifts', '/overrides', '/feed', '/timeline']) {
      assert.equal((await w.call(member, 'GET', `${one}${path}`)).statusCode, 200, path);
      assert.equal((await w.call(w.testKey, 'GET', `${one}${path}`)).statusCode, 200, `${path} (test key)`);
      assert.equal((await w.call(w.as(w.stranger), 'GET', `${one}${path}`)).statusCode, 404, `${path} (stranger)`);
    }
    // Schedules are shared by both modes: a test key writes them too.
    const byTestKey = await w.ok<ScheduleOut>(w.testKey, 'POST', base, { name: 'From a test key', time_zone: 'UTC', layers: [] });
    assert.equal((await w.call(w.as(w.owner), 'GET', `${base}/${byTestKey.id}`)).statusCode, 200);
    assert.equal((await w.call(w.testKey, 'DELETE', `${base}/${byTestKey.id}`)).statusCode, 200);
    // Another org's schedule is 404 through this org, and to this org's members through its own.
    const theirs = await w.ok<ScheduleOut>(w.as(w.stranger), 'POST', `/v1/orgs/${w.stranger.slug}/schedules`, { name: 'Theirs', time_zone: 'UTC', layers: [] });
    assert.equal((await w.call(w.as(w.owner), 'GET', `${base}/${theirs.id}`)).statusCode, 404);
    assert.equal((await w.call(w.as(w.owner), 'GET', `/v1/orgs/${w.stranger.slug}/schedules/${theirs.id}`)).statusCode, 404);
    assert.equal((await w.call(w.as(w.owner), 'GET', `/v1/orgs/${w.stranger.slug}/on-call`)).statusCode, 404);
    const ownerKey = { 'x-api-key': (await createKey(w.t.app, w.owner.cookie, 'live')).key };
    assert.equal((await w.call(ownerKey, 'PATCH', one, { name: 'Owner by key' })).statusCode, 200);
  });

  test('bad input: 422 naming the field', async () => {
    const layer = (over: object) => ({ layers: [{ start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id], ...over }] });
    const post = (over: object) => fields('POST', base, { name: 'Bad', time_zone: 'Europe/London', layers: [], ...over });
    assert.deepEqual(await post({ time_zone: 'Europe/Atlantis' }), ['time_zone']);
    assert.deepEqual(await post({ time_zone: undefined }), ['time_zone']);
    assert.deepEqual(await post(layer({ users: [] })), ['layers.0.users']);
    assert.deepEqual(await post(layer({ users: [w.ann.id, w.stranger.id] })), ['layers.0.users.1']);
    assert.deepEqual(await post(layer({ turn: { unit: 'day', length: 0 } })), ['layers.0.turn.length']);
    assert.deepEqual(await post(layer({ turn: { unit: 'day', length: 366 } })), ['layers.0.turn.length']);
    assert.deepEqual(await post(layer({ turn: { unit: 'week', length: 366 } })), ['layers.0.turn.length']);
    assert.deepEqual(await post(layer({ turn: { unit: 'hour', length: 8761 } })), ['layers.0.turn.length']);
    assert.deepEqual(await post(layer({ turn: { unit: 'month', length: 1 } })), ['layers.0.turn.unit']);
    assert.deepEqual(await post(layer({ restrictions: [{ start_time: '9:00', end_time: '17:00' }] })), ['layers.0.restrictions.0.start_time']);
    assert.deepEqual(await post(layer({ restrictions: [{ start_time: '09:00', end_time: '24:00' }] })), ['layers.0.restrictions.0.end_time']);
    assert.deepEqual(await post(layer({ restrictions: [{ days: ['mon', 'funday'], start_time: '09:00', end_time: '17:00' }] })), ['layers.0.restrictions.0.days.1']);
    assert.deepEqual(await post(layer({ start: '2026-02-30T09:00' })), ['layers.0.start']);
    assert.deepEqual(await post(layer({ start: 'next monday' })), ['layers.0.start']);
    const twentyOne = Array.from({ length: 21 }, () => layer({}).layers[0]);
    assert.deepEqual(await post({ layers: twentyOne }), ['layers']);
    assert.deepEqual(await post(layer({ users: Array.from({ length: 101 }, () => w.ann.id) })), ['layers.0.users']);
    assert.deepEqual(await post({ layers: [layer({ id: 'x' }).layers[0], layer({ id: 'x' }).layers[0]] }), ['layers.1.id']);
    // A hundred turns of one user is fine (a user may appear more than once).
    await create(layer({ users: Array.from({ length: 100 }, () => w.ann.id) }));

    const s = await create({ name: 'Ranges', layers: [weekly([w.ann.id])] });
    const one = `${base}/${s.id}`;
    assert.deepEqual(await fields('PATCH', one, { time_zone: 'Mars/Olympus' }), ['time_zone']);
    assert.deepEqual(await fields('PATCH', one, {}), ['body']);
    const o = (start: string, end: string, user = w.ann.id) => fields('POST', `${one}/overrides`, { user_id: user, start, end });
    assert.deepEqual(await o('2026-03-05T10:00:00Z', '2026-03-05T10:00:00Z'), ['end']);
    assert.deepEqual(await o('2026-03-05T10:00:00Z', '2026-03-05T09:00:00Z'), ['end']);
    assert.deepEqual(await o('2026-03-05T10:00:00Z', '2026-06-06T10:00:01Z'), ['end']);
    assert.deepEqual(await o('2026-02-05T10:00:00Z', '2026-02-06T10:00:00Z'), ['end']);
    assert.deepEqual(await o('2026-03-05T10:00:00Z', '2026-03-06T10:00:00Z', w.stranger.id), ['user_id']);
    assert.deepEqual(await o('tomorrow', '2026-03-06T10:00:00Z'), ['start']);
    for (const path of ['shifts', 'overrides', 'timeline']) {
      assert.deepEqual(await fields('GET', `${one}/${path}?from=2026-03-01T00:00:00Z&to=2026-06-03T00:00:00Z`), ['to'], `${path}: over 93 days`);
      assert.deepEqual(await fields('GET', `${one}/${path}?from=2026-03-05T00:00:00Z&to=2026-03-01T00:00:00Z`), ['to'], `${path}: reversed`);
    }
    assert.deepEqual(await fields('GET', '/v1/auth/me/shifts?from=2026-03-01T00:00:00Z&to=2026-06-03T00:00:00Z'), ['to']);
    assert.deepEqual(await fields('GET', `${one}/on-call?at=soon`), ['at']);
    // Exactly 93 days is allowed.
    assert.equal((await w.call(member, 'GET', `${one}/shifts?from=2026-03-01T00:00:00Z&to=2026-06-02T00:00:00Z`)).statusCode, 200);
    // A slug already taken.
    assert.equal((await w.call(admin, 'POST', base, { name: 'Again', slug: s.slug, time_zone: 'UTC', layers: [] })).statusCode, 409);
    assert.equal((await w.call(admin, 'PATCH', one, { slug: 'water-network' })).statusCode, 409);
    assert.equal((await w.call(member, 'GET', `${base}/no-such-schedule`)).statusCode, 404);
  });

  test('concurrent creations with one slug: one 201, the others 409, never a 5xx', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => w.call(admin, 'POST', base, { name: 'Race', slug: `race-${testDialect}`, time_zone: 'UTC', layers: [] })));
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [201, 409, 409, 409, 409, 409, 409, 409]);
  });
});
