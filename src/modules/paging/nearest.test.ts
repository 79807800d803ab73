import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MINUTE } from '../../lib/clock.js';
import { dispatchWorld, type DispatchWorld, type TimelineView } from '../../../test/world.js';
import type { Headers } from '../../../test/helpers.js';
import { haversineM } from '../dispatch/index.js';
import { distanceWords, sendDueNotifications } from './notifications.js';

// The `nearest` target of an escalation policy (issue #38): the count nearest members with a live
// beacon to the incident, on call in a schedule or active in a team when one is given.
describe('the nearest target: nearest on-duty responders by live beacon', () => {
  let w: DispatchWorld;
  let primary: number; // Ann on call all day
  let teamId: number; // Ben and Adam (and the owner, its maker)

  before(async () => {
    w = await dispatchWorld({ BEACON_TIMEOUT_MS: String(60 * MINUTE) });
    const layer = { start: '2026-01-05T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] };
    primary = (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: 'Primary', time_zone: 'UTC', layers: [layer] })).id;
    await w.ok(w.as(w.owner), 'PATCH', `/v1/users/${w.owner.id}`, { plan: 'agency' });
    const team = await w.ok<{ id: number; slug: string }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/teams`, { name: 'Mains crew' });
    teamId = team.id;
    for (const u of [w.ben, w.admin]) await w.ok(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/teams/${team.slug}/members`, { user_id: u.id });
    for (const u of [w.ann, w.ben, w.admin, w.owner]) await w.ok(w.as(u), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'email', delay_minutes: 0 }], low: [{ channel: 'email', delay_minutes: 0 }] }, 200);
    // Ann ~1.1 km north (two devices: the phone 3.3 km away, the tracker 1.1 km), Ben ~2.2 km east, Adam ~5.6 km, the owner ~11 km.
    await beacon(w.as(w.ann), 0.03, 0, 'phone');
    await beacon(w.as(w.ann), 0.01, 0, 'tracker');
    await beacon(w.as(w.ben), 0, 0.02);
    await beacon(w.as(w.admin), 0.05, 0);
    await beacon(w.as(w.owner), 0.1, 0);
    await w.ok(w.as(w.stranger), 'POST', '/v1/signals', { type: 'beacon', lat: 0, lng: 0 }); // another org, on the spot
  });
  after(() => w.close());

  const beacon = (headers: Headers, lat: number, lng: number, device = 'phone') =>
    w.ok(headers, 'POST', '/v1/signals', { type: 'beacon', lat, lng, meta: { device_id: device }, org_id: w.orgId });
  const policy = (targets: object[]) => w.call(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/escalation-policies`, { name: 'Nearest', levels: [{ delay_minutes: 5, targets }] });
  async function open(targets: object[], fields: object = { lat: 0, lng: 0 }) {
    const p = await policy(targets);
    assert.equal(p.statusCode, 201, p.body);
    const incident = await w.incident(w.as(w.owner), { title: 'Water main burst', priority: 'urgent', escalation_policy_id: (JSON.parse(p.body) as { id: number }).id, ...fields });
    await w.t.ctx.escalation.idle();
    return incident;
  }
  const events = async (id: number, type: string): Promise<TimelineView[]> => (await w.timeline(w.as(w.owner), id)).filter((e) => e.type === type);
  const paged = async (id: number) => (await events(id, 'paged')).map((e) => [e.data.user_id, e.data.distance_m]);
  const km = (lat: number, lng: number) => Math.round(haversineM(0, 0, lat, lng));

  test('pages the count nearest members, nearest first, each once at their nearest device, with the distance on the paged event', async () => {
    const incident = await open([{ type: 'nearest', count: 3 }]);
    assert.deepEqual(await paged(incident.Id), [
      [w.ann.id, km(0.01, 0)],
      [w.ben.id, km(0, 0.02)],
      [w.admin.id, km(0.05, 0)],
    ]);
    const e = (await events(incident.Id, 'paged'))[0]!;
    assert.deepEqual(e.data.target, { type: 'nearest', count: 3 });
  });

  test('on duty only: on call in the schedule, or active in the team', async () => {
    const bySchedule = await open([{ type: 'nearest', count: 5, schedule_id: primary }]);
    assert.deepEqual(await paged(bySchedule.Id), [[w.ann.id, km(0.01, 0)]], 'only Ann is on call today');
    const byTeam = await open([{ type: 'nearest', count: 2, team_id: teamId }]);
    assert.deepEqual(await paged(byTeam.Id), [[w.ben.id, km(0, 0.02)], [w.admin.id, km(0.05, 0)]], 'Ann is not in the team; the owner is third');
  });

  test('nobody in range (within_m) or no position on the incident: the level is skipped with the reason', async () => {
    const far = await open([{ type: 'nearest', count: 2, within_m: 500 }]);
    assert.deepEqual(await paged(far.Id), []);
    assert.match(String((await events(far.Id, 'escalation_skipped'))[0]!.data.reason), /nobody with a live beacon within 500 m of the incident/);
    const near = await open([{ type: 'nearest', count: 5, within_m: 3000 }]);
    assert.deepEqual((await paged(near.Id)).map((p) => p[0]), [w.ann.id, w.ben.id], 'within 3 km: Ann and Ben only');

    const nowhere = await open([{ type: 'nearest', count: 2 }], {});
    assert.deepEqual(await paged(nowhere.Id), []);
    assert.match(String((await events(nowhere.Id, 'escalation_skipped'))[0]!.data.reason), /the incident has no position/);
  });

  test('a stale beacon does not count: positions are read when the level fires', async () => {
    w.t.clock.advance(61 * MINUTE);
    await beacon(w.as(w.owner), 0.1, 0);
    const incident = await open([{ type: 'nearest', count: 2 }]);
    assert.deepEqual(await paged(incident.Id), [[w.owner.id, km(0.1, 0)]], 'only the owner beaconed within the timeout');
    // Everyone else beacons again for the next tests.
    await beacon(w.as(w.ann), 0.01, 0, 'tracker');
    await beacon(w.as(w.ben), 0, 0.02);
    await beacon(w.as(w.admin), 0.05, 0);
  });

  test('the notification says how far: "1.1 km from you" in the email and the push', async () => {
    assert.equal(distanceWords(1234), '1.2 km from you');
    assert.equal(distanceWords(350.4), '350 m from you');
    const incident = await open([{ type: 'nearest', count: 1 }]);
    await sendDueNotifications(w.t.ctx);
    const mail = await w.t.ctx.db.selectFrom('outbox').select(['payload']).where('topic', '=', 'incident.paged').where('user_id', '=', w.ann.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.match(mail.payload, new RegExp(`Urgent incident ${incident.Id}, Water main burst \\(1\\.1 km from you\\)`));
  });

  test('422 with the field: count out of 1..5, within_m out of 10..50000, another org\'s schedule or team, both schedule_id and team_id, an id', async () => {
    const strangerSchedule = (await w.ok<{ id: number }>(w.as(w.stranger), 'POST', `/v1/orgs/${w.stranger.slug}/schedules`, { name: 'Theirs', time_zone: 'UTC', layers: [] })).id;
    const bad = async (target: object, field: string) => {
      const res = await policy([target]);
      assert.equal(res.statusCode, 422, `${JSON.stringify(target)}: ${res.body}`);
      assert.ok(res.body.includes(`levels.0.targets.0.${field}`) || res.body.includes(`/levels/0/targets/0/${field}`), `${field} in ${res.body}`);
    };
    await bad({ type: 'nearest', count: 0 }, 'count');
    await bad({ type: 'nearest', count: 6 }, 'count');
    await bad({ type: 'nearest' }, 'count');
    await bad({ type: 'nearest', count: 1, within_m: 9 }, 'within_m');
    await bad({ type: 'nearest', count: 1, within_m: 50_001 }, 'within_m');
    await bad({ type: 'nearest', count: 1, schedule_id: strangerSchedule }, 'schedule_id');
    await bad({ type: 'nearest', count: 1, team_id: 999_999 }, 'team_id');
    await bad({ type: 'nearest', count: 1, schedule_id: primary, team_id: teamId }, 'team_id');
    await bad({ type: 'nearest', count: 1, id: w.ann.id }, 'id');
    await bad({ type: 'user' }, 'id');
    await bad({ type: 'user', id: w.ann.id, count: 2 }, 'count');
    const ok = await policy([{ type: 'nearest', count: 5, within_m: 50_000, team_id: teamId }]);
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual((JSON.parse(ok.body) as { levels: { targets: object[] }[] }).levels[0]!.targets, [{ type: 'nearest', count: 5, within_m: 50_000, team_id: teamId }]);
  });
});
