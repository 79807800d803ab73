import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setPlan } from '../../../test/factories.js';
import { dispatchWorld, type DispatchWorld } from '../../../test/world.js';

interface PolicyView {
  id: number;
  org_id: number;
  name: string;
  repeat: number;
  levels: { delay_minutes: number; targets: { type: string; id: number }[] }[];
}
interface ErrorView {
  code: string;
  details?: { field: string; message: string }[];
}

describe('escalation policies', () => {
  let w: DispatchWorld;
  let base: string;
  let scheduleId: number;
  let teamId: number;
  let strangerSchedule: number;

  before(async () => {
    w = await dispatchWorld();
    base = `/v1/orgs/${w.orgSlug}/escalation-policies`;
    const layer = { start: '2026-01-05T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] };
    scheduleId = (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: 'Primary', time_zone: 'UTC', layers: [layer] })).id;
    await setPlan(w.t.app, w.owner.cookie, w.owner.id, 'agency');
    teamId = (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/teams`, { name: 'Crew' })).id;
    strangerSchedule = (await w.ok<{ id: number }>(w.as(w.stranger), 'POST', `/v1/orgs/${w.stranger.slug}/schedules`, { name: 'Theirs', time_zone: 'UTC', layers: [] })).id;
  });
  after(() => w.close());

  const policyBody = () => ({
    name: 'Water network',
    levels: [
      { delay_minutes: 5, targets: [{ type: 'schedule', id: scheduleId }] },
      { delay_minutes: 10, targets: [{ type: 'user', id: w.admin.id }, { type: 'team', id: teamId }] },
    ],
  });
  const fieldsOf = (res: { json<T>(): T }) => (res.json<ErrorView>().details ?? []).map((d) => d.field);

  test('admins and owners create, change and delete; members read; another org sees 404', async () => {
    const created = await w.ok<PolicyView>(w.as(w.admin), 'POST', base, policyBody());
    assert.equal(created.repeat, 0, 'repeat defaults to 0');
    assert.equal(created.org_id, w.orgId);
    assert.deepEqual(created.levels, policyBody().levels);
    assert.equal((await w.call(w.as(w.ann), 'POST', base, policyBody())).statusCode, 403);
    assert.deepEqual((await w.ok<PolicyView>(w.as(w.ann), 'GET', `${base}/${created.id}`)).levels, created.levels);
    const list = await w.ok<{ escalation_policies: PolicyView[] }>(w.as(w.ben), 'GET', base);
    assert.ok(list.escalation_policies.some((p) => p.id === created.id));
    assert.equal((await w.call(w.as(w.stranger), 'GET', `${base}/${created.id}`)).statusCode, 404);
    assert.equal((await w.call(w.as(w.stranger), 'GET', `/v1/orgs/${w.stranger.slug}/escalation-policies/${created.id}`)).statusCode, 404, "another org's path");
    assert.equal((await w.call(w.as(w.ann), 'PATCH', `${base}/${created.id}`, { repeat: 2 })).statusCode, 403);
    const changed = await w.ok<PolicyView>(w.as(w.owner), 'PATCH', `${base}/${created.id}`, { repeat: 2, name: 'Renamed' });
    assert.deepEqual([changed.repeat, changed.name, changed.levels], [2, 'Renamed', created.levels]);
    assert.equal((await w.call(w.as(w.ann), 'DELETE', `${base}/${created.id}`)).statusCode, 403);
    assert.deepEqual(await w.ok(w.as(w.admin), 'DELETE', `${base}/${created.id}`), { id: created.id, deleted: true });
    assert.equal((await w.call(w.as(w.admin), 'GET', `${base}/${created.id}`)).statusCode, 404);
  });

  test('422 with the field: unknown targets, targets of another org, no levels, delays and repeat out of range, too many levels or targets', async () => {
    const post = (body: object) => w.call(w.as(w.owner), 'POST', base, body);
    const bad = async (body: object, field: string) => {
      const res = await post(body);
      assert.equal(res.statusCode, 422, `${JSON.stringify(body).slice(0, 120)}: ${res.body}`);
      assert.ok(fieldsOf(res).some((f) => f === field || f.startsWith(`${field}.`) || f === field.replace(/\.\d+$/, '')), `${field} in ${res.body}`);
    };
    const level = (targets: object[], delay = 5) => ({ delay_minutes: delay, targets });
    await bad({ name: 'x', levels: [level([{ type: 'user', id: 999_999 }])] }, 'levels.0.targets.0.id');
    await bad({ name: 'x', levels: [level([{ type: 'user', id: w.ann.id }]), level([{ type: 'user', id: w.stranger.id }])] }, 'levels.1.targets.0.id');
    await bad({ name: 'x', levels: [level([{ type: 'schedule', id: strangerSchedule }])] }, 'levels.0.targets.0.id');
    await bad({ name: 'x', levels: [level([{ type: 'team', id: 999_999 }])] }, 'levels.0.targets.0.id');
    await bad({ name: 'x', levels: [level([{ type: 'robot', id: 1 }])] }, 'levels.0.targets.0.type');
    await bad({ name: 'x', levels: [] }, 'levels');
    await bad({ name: 'x' }, 'levels');
    await bad({ name: 'x', levels: [level([{ type: 'user', id: w.ann.id }], 0)] }, 'levels.0.delay_minutes');
    await bad({ name: 'x', levels: [level([{ type: 'user', id: w.ann.id }], 1441)] }, 'levels.0.delay_minutes');
    await bad({ name: 'x', repeat: 10, levels: [level([{ type: 'user', id: w.ann.id }])] }, 'repeat');
    await bad({ name: 'x', repeat: -1, levels: [level([{ type: 'user', id: w.ann.id }])] }, 'repeat');
    await bad({ name: 'x', levels: Array.from({ length: 21 }, () => level([{ type: 'user', id: w.ann.id }])) }, 'levels');
    await bad({ name: 'x', levels: [level(Array.from({ length: 11 }, () => ({ type: 'user', id: w.ann.id })))] }, 'levels.0.targets');
    await bad({ name: 'x', levels: [level([])] }, 'levels.0.targets');
    // The limits themselves are accepted.
    const most = { name: 'Big', repeat: 9, levels: Array.from({ length: 20 }, () => level(Array.from({ length: 10 }, () => ({ type: 'user', id: w.ann.id })), 1440)) };
    assert.equal((await post(most)).statusCode, 201);
    // A PATCH is checked the same way.
    const p = await w.ok<PolicyView>(w.as(w.owner), 'POST', base, policyBody());
    const res = await w.call(w.as(w.owner), 'PATCH', `${base}/${p.id}`, { levels: [level([{ type: 'team', id: 424242 }])] });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(fieldsOf(res), ['levels.0.targets.0.id']);
  });

  test("integrations, the org default and tickets name a policy of the org; DELETE is 409 while an integration or the default uses it", async () => {
    const p = await w.ok<PolicyView>(w.as(w.owner), 'POST', base, policyBody());
    const other = await w.ok<PolicyView>(w.as(w.stranger), 'POST', `/v1/orgs/${w.stranger.slug}/escalation-policies`, { name: 'Theirs', levels: [{ delay_minutes: 5, targets: [{ type: 'user', id: w.stranger.id }] }] });
    // Integration: create with it, PATCH it, and the answer shows it.
    const bad = await w.call(w.as(w.owner), 'POST', '/v1/integrations', { name: 'Alertmanager', org_id: w.orgId, escalation_policy_id: other.id });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.deepEqual(fieldsOf(bad), ['escalation_policy_id']);
    const integration = await w.ok<{ id: number; escalation_policy_id: number | null }>(w.as(w.owner), 'POST', '/v1/integrations', { name: 'Alertmanager', org_id: w.orgId, escalation_policy_id: p.id });
    assert.equal(integration.escalation_policy_id, p.id);
    const conflict = await w.call(w.as(w.owner), 'DELETE', `${base}/${p.id}`);
    assert.equal(conflict.statusCode, 409, conflict.body);
    assert.match(conflict.json<{ error: string }>().error, /Alertmanager/);
    assert.equal((await w.call(w.as(w.owner), 'PATCH', `/v1/integrations/${integration.id}`, { escalation_policy_id: other.id })).statusCode, 422);
    assert.equal((await w.ok<{ escalation_policy_id: number | null }>(w.as(w.owner), 'PATCH', `/v1/integrations/${integration.id}`, { escalation_policy_id: null })).escalation_policy_id, null);
    // The org default: GET and PATCH of the dispatch settings.
    const settings = `/v1/orgs/${w.orgSlug}/dispatch`;
    assert.equal((await w.ok<{ default_escalation_policy_id: number | null }>(w.as(w.ann), 'GET', settings)).default_escalation_policy_id, null);
    const badDefault = await w.call(w.as(w.owner), 'PATCH', settings, { default_escalation_policy_id: other.id });
    assert.deepEqual([badDefault.statusCode, fieldsOf(badDefault)], [422, ['default_escalation_policy_id']]);
    assert.equal((await w.call(w.as(w.ann), 'PATCH', settings, { default_escalation_policy_id: p.id })).statusCode, 403);
    const withDefault = await w.ok<{ default_escalation_policy_id: number | null; handoff_notice_minutes: number | null }>(w.as(w.admin), 'PATCH', settings, { default_escalation_policy_id: p.id });
    assert.deepEqual([withDefault.default_escalation_policy_id, withDefault.handoff_notice_minutes], [p.id, 15]);
    assert.equal((await w.ok<{ default_escalation_policy_id: number | null }>(w.as(w.ann), 'GET', settings)).default_escalation_policy_id, p.id);
    assert.equal((await w.call(w.as(w.owner), 'DELETE', `${base}/${p.id}`)).statusCode, 409, 'the org default');
    await w.ok(w.as(w.admin), 'PATCH', settings, { default_escalation_policy_id: null });
    // A revoked integration does not keep it.
    await w.ok(w.as(w.owner), 'PATCH', `/v1/integrations/${integration.id}`, { escalation_policy_id: p.id });
    await w.ok(w.as(w.owner), 'DELETE', `/v1/integrations/${integration.id}`);
    assert.equal((await w.call(w.as(w.owner), 'DELETE', `${base}/${p.id}`)).statusCode, 200);
  });

  test('a ticket stores its policy with a copy taken then: later edits of the policy leave the copy alone', async () => {
    const p = await w.ok<PolicyView>(w.as(w.owner), 'POST', base, policyBody());
    const other = await w.ok<PolicyView>(w.as(w.stranger), 'POST', `/v1/orgs/${w.stranger.slug}/escalation-policies`, { name: 'Theirs', levels: [{ delay_minutes: 5, targets: [{ type: 'user', id: w.stranger.id }] }] });
    const stored = (id: number) => w.t.ctx.db.selectFrom('incidents').select(['escalation_policy_id', 'escalation_snapshot']).where('id', '=', id).executeTakeFirstOrThrow();
    const bad = await w.call(w.as(w.owner), 'POST', '/v1/tickets', { title: 'Burst', org_id: w.orgId, escalation_policy_id: other.id });
    assert.deepEqual([bad.statusCode, fieldsOf(bad)], [422, ['escalation_policy_id']]);
    const incident = await w.incident(w.as(w.owner), { escalation_policy_id: p.id });
    const first = await stored(incident.Id);
    assert.equal(first.escalation_policy_id, p.id);
    assert.deepEqual(JSON.parse(first.escalation_snapshot!), { name: p.name, repeat: 0, levels: p.levels });
    await w.ok(w.as(w.owner), 'PATCH', `${base}/${p.id}`, { repeat: 3, levels: [{ delay_minutes: 1, targets: [{ type: 'user', id: w.ben.id }] }] });
    assert.deepEqual(await stored(incident.Id), first, 'the running copy stays');
    // PATCH the ticket: another org's policy is 422; its own takes a new copy; null clears it.
    const badPatch = await w.call(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { escalation_policy_id: other.id });
    assert.deepEqual([badPatch.statusCode, fieldsOf(badPatch)], [422, ['escalation_policy_id']]);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { escalation_policy_id: p.id });
    assert.equal((JSON.parse((await stored(incident.Id)).escalation_snapshot!) as { repeat: number }).repeat, 3);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { escalation_policy_id: null });
    assert.deepEqual(await stored(incident.Id), { escalation_policy_id: null, escalation_snapshot: null });
    // An incident without one stores none.
    const plain = await w.incident(w.as(w.owner));
    assert.deepEqual(await stored(plain.Id), { escalation_policy_id: null, escalation_snapshot: null });
  });
});
