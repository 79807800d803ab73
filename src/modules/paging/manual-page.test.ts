import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dispatchWorld, type DispatchWorld } from '../../../test/world.js';

interface PageView {
  paged: { user_id: number; notifications: { channel: string; due_at: string }[] }[];
}

describe('POST /v1/tickets/:id/page: responders added by hand', () => {
  let w: DispatchWorld;
  let scheduleId: number;
  let emptySchedule: number;
  let strangerSchedule: number;

  before(async () => {
    w = await dispatchWorld();
    // The clock stands at 2026-01-05T12:00Z: Ann's first day-long turn began at 09:00.
    const layer = { start: '2026-01-05T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] };
    scheduleId = (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: 'Primary', time_zone: 'UTC', layers: [layer] })).id;
    emptySchedule = (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: 'Nobody', time_zone: 'UTC', layers: [] })).id;
    strangerSchedule = (await w.ok<{ id: number }>(w.as(w.stranger), 'POST', `/v1/orgs/${w.stranger.slug}/schedules`, { name: 'Theirs', time_zone: 'UTC', layers: [] })).id;
  });
  after(() => w.close());

  const pageCall = (by: Parameters<DispatchWorld['as']>[0], id: number, body: object) => w.call(w.as(by), 'POST', `/v1/tickets/${id}/page`, body);
  const pagedEvents = async (id: number) => (await w.timeline(w.as(w.owner), id)).filter((e) => e.type === 'paged');

  test('an admin pages members and whoever is on call in a schedule, each by their own rules, with a paged event each', async () => {
    const incident = await w.incident(w.as(w.owner), { priority: 'urgent' });
    const res = await pageCall(w.admin, incident.Id, { user_ids: [w.ben.id, w.ben.id], schedule_id: scheduleId });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json<PageView>();
    assert.deepEqual(body.paged.map((p) => p.user_id), [w.ben.id, w.ann.id], 'Ben once; Ann is on call');
    assert.deepEqual(body.paged[0]!.notifications.map((n) => n.channel), ['push', 'email', 'sms', 'voice'], 'the default high rules');
    const events = await pagedEvents(incident.Id);
    assert.deepEqual(
      events.map((e) => [e.data.user_id, e.data.target, e.actor?.user_id]),
      [
        [w.ben.id, { type: 'user', id: w.ben.id }, w.admin.id],
        [w.ann.id, { type: 'schedule', id: scheduleId }, w.admin.id],
      ],
    );
    assert.deepEqual([events[0]!.data.level, events[0]!.data.loop], [null, null]);
    // The page woke this instance's paging run, which settles the notifications due now (push and
    // email); the SMS and the call wait for their delays.
    await w.t.ctx.escalation.idle();
    const stored = await w.t.ctx.db.selectFrom('paging_notifications').select(['user_id', 'channel', 'status']).where('incident_id', '=', incident.Id).orderBy('id').execute();
    assert.equal(stored.length, 8);
    for (const n of stored) assert.equal(n.status === 'pending', n.channel === 'sms' || n.channel === 'voice', `${n.channel} for ${n.user_id}: ${n.status}`);
  });

  test('who may: admins, owners and the assignee; another member 403, another org and the other mode 404; a resolved incident 409', async () => {
    const incident = await w.incident(w.as(w.owner), { priority: 'high' });
    assert.equal((await pageCall(w.ben, incident.Id, { user_ids: [w.ann.id] })).statusCode, 403);
    assert.equal((await pageCall(w.stranger, incident.Id, { user_ids: [w.ann.id] })).statusCode, 404);
    assert.equal((await w.call(w.testKey, 'POST', `/v1/tickets/${incident.Id}/page`, { user_ids: [w.ann.id] })).statusCode, 404);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { assignee_id: w.ben.id });
    assert.equal((await pageCall(w.ben, incident.Id, { user_ids: [w.ann.id] })).statusCode, 201, 'the assignee');
    assert.equal((await w.call(w.as(w.owner), 'POST', `/v1/incidents/${incident.Id}/page`, { user_ids: [w.admin.id] })).statusCode, 201, 'both paths');
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'resolved' });
    assert.equal((await pageCall(w.owner, incident.Id, { user_ids: [w.ann.id] })).statusCode, 409);
  });

  test('422 with the field: a person or schedule not of the org, a schedule with nobody on call, nothing named', async () => {
    const incident = await w.incident(w.as(w.owner));
    const fields = async (body: object) => {
      const res = await pageCall(w.owner, incident.Id, body);
      assert.equal(res.statusCode, 422, res.body);
      return res.json<{ details: { field: string; message: string }[] }>().details;
    };
    assert.deepEqual((await fields({ user_ids: [w.ann.id, w.stranger.id] })).map((d) => d.field), ['user_ids.1']);
    assert.deepEqual((await fields({ schedule_id: strangerSchedule })).map((d) => d.field), ['schedule_id']);
    const gap = await fields({ schedule_id: emptySchedule });
    assert.deepEqual([gap[0]!.field, gap[0]!.message], ['schedule_id', 'nobody is on call in it now']);
    assert.equal((await pageCall(w.owner, incident.Id, {})).statusCode, 422);
    assert.equal((await pagedEvents(incident.Id)).length, 0, 'nothing was paged');
  });
});
