import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sweepEscalations } from '../../jobs/escalation-sweeper.js';
import { MINUTE } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { incidentOfReply } from '../incidents/index.js';

// Every incident email carries a Reply-To of the form reply+<id>-<mac>@INBOUND_EMAIL_DOMAIN, so an
// answer by email lands on the incident (docs/integrations.md): the assignment and escalation
// emails here, the SLA emails in src/jobs/sla-sweeper.test.ts.
describe('Reply-To on incident emails', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  before(async () => {
    t = await buildTestApp({ INBOUND_EMAIL_DOMAIN: 'in.muster.test' });
    owner = await signUp(t.app, { name: 'Owen Owner' });
    member = await signUp(t.app, { name: 'Mia Member' });
    const added = await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: member.email } });
    assert.equal(added.statusCode, 201, added.body);
  });
  after(() => t.close());

  async function replyTosOf(topic: string, to: string): Promise<string[]> {
    const rows = await t.ctx.db.selectFrom('outbox').select('payload').where('kind', '=', 'email').where('topic', '=', topic).where('recipient', '=', to).execute();
    return rows.map((r) => (JSON.parse(r.payload) as { reply_to?: string }).reply_to ?? '(none)');
  }
  const incidentOf = (address: string) => incidentOfReply(t.ctx, address.split('@')[0]!);

  test('the assignee’s email and the escalation emails answer to the incident', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: owner.cookie }, payload: { title: 'Pump failure', priority: 'urgent' } });
    const id = body<{ Id: number }>(created).Id;
    const assigned = await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${id}`, headers: { cookie: owner.cookie }, payload: { assignee_id: member.id } });
    assert.equal(assigned.statusCode, 200, assigned.body);
    const [assignment] = await replyTosOf('incident.assigned', member.email);
    assert.match(assignment!, /^reply\+\d+-[0-9a-f]{20}@in\.muster\.test$/);
    assert.equal(incidentOf(assignment!), id);

    t.clock.advance(6 * MINUTE);
    assert.ok((await sweepEscalations(t.ctx)) >= 1);
    const [escalation] = await replyTosOf('incident.escalated', owner.email);
    assert.equal(incidentOf(escalation!), id);
  });
});
