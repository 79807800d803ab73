// What a new incident takes from its org's dispatch settings comes from memory (defaults-cache.ts):
// one read per org, a change holds for the next incident, and a default policy deleted behind the
// memory's back (another instance, its notice not yet here) never turns a creation into a 422.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { buildWorld, type World } from '../../../test/world.js';

describe('the opening defaults cache', () => {
  let t: TestApp;
  let w: World<'owner'>;
  let reads = 0;
  let orgId: number;
  let slug: string;
  before(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => void (/^select\b.* from "dispatch_settings"/i.test(sql) && (reads += 1)) });
    w = await buildWorld(t, { people: { owner: { name: 'Olga Owner' } }, org: { by: 'owner', personal: true } });
    orgId = w.org!.id;
    slug = w.org!.slug;
  });
  after(() => t.close());

  const as = () => w.as(w.people.owner);
  const create = (fields: Record<string, unknown> = {}) => w.ok<{ Id: number }>(as(), 'POST', '/v1/tickets', { title: 'Gas smell', org_id: orgId, priority: 'urgent', ...fields });
  const stored = (id: number) => t.ctx.db.selectFrom('incidents').select(['created_at', 'escalate_at', 'escalation_policy_id']).where('id', '=', id).executeTakeFirstOrThrow();
  const minutesToEscalation = async (id: number) => {
    const r = await stored(id);
    return (Date.parse(r.escalate_at!) - Date.parse(r.created_at)) / 60_000;
  };

  test('one read of the settings per org, then none; a change holds for the next incident', async () => {
    reads = 0;
    const first = await create();
    await create();
    await create({ priority: 'high' });
    assert.equal(reads, 1, 'three creations, one read');
    assert.equal(await minutesToEscalation(first.Id), 5);
    await w.ok(as(), 'PATCH', `/v1/orgs/${slug}/dispatch`, { ack_timeout_minutes: { urgent: 2 } });
    const after = await create();
    assert.equal(await minutesToEscalation(after.Id), 2, 'the new timeout at once');
  });

  test('a default policy deleted behind the memory’s back: the stored settings decide, no 422', async () => {
    const policy = await w.ok<{ id: number }>(as(), 'POST', `/v1/orgs/${slug}/escalation-policies`, { name: 'Night', levels: [{ delay_minutes: 5, targets: [{ type: 'user', id: w.people.owner.id }] }] });
    await w.ok(as(), 'PATCH', `/v1/orgs/${slug}/dispatch`, { default_escalation_policy_id: policy.id });
    // Read into memory by a creation that names no policy of its own (and keeps none).
    const named = await create({ escalation_policy_id: null });
    assert.equal((await stored(named.Id)).escalation_policy_id, null);
    reads = 0;
    // As another instance would: the default cleared and the policy deleted, with no notice here.
    await t.ctx.db.updateTable('dispatch_settings').set({ default_escalation_policy_id: null }).where('org_id', '=', orgId).execute();
    await t.ctx.db.deleteFrom('escalation_policies').where('id', '=', policy.id).execute();
    const res = await w.call(as(), 'POST', '/v1/tickets', { title: 'Flooded cellar', org_id: orgId, priority: 'urgent' });
    assert.equal(res.statusCode, 201, res.body);
    const incident = await stored(res.json<{ Id: number }>().Id);
    assert.equal(incident.escalation_policy_id, null, 'no policy: the built-in escalation');
    assert.equal((Date.parse(incident.escalate_at!) - Date.parse(incident.created_at)) / 60_000, 2, 'with the stored timeout');
    assert.equal(reads, 1, 'read again once');
  });
});
