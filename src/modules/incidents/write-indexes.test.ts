import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type CompiledQuery } from 'kysely';
import { body, buildTestApp, queryPlan, testDialect, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { findOpenByRef, insertIncident, type NewIncident } from './incidents.repository.js';

// What a creation writes (issue 19, migration 0020): the indexes on columns a new incident leaves
// NULL hold no entry for it, the lookups those indexes serve still use them, the status-page token
// starts with the creation time so its unique index takes new tokens at one place, and the row a
// creation goes on with is built, not read back (no RETURNING), equal to the stored one.
interface Made {
  Id: number;
  customer_token: string;
  created_at: string;
}

describe('incident creation: partial indexes, a time-ordered token, the row without RETURNING', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: number;
  const made: Made[] = [];
  before(async () => {
    t = await buildTestApp();
    owner = await signUp(t.app, { name: 'Owner' });
    const orgs = await t.app.inject({ method: 'GET', url: '/v1/orgs', headers: { cookie: owner.cookie } });
    orgId = body<{ orgs: { id: number; primary: boolean }[] }>(orgs).orgs.find((o) => o.primary)!.id;
    for (const payload of [{ title: 'By hand' }, { title: 'From a monitor', source_ref: 'disk-full' }, { title: 'Later' }]) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: owner.cookie }, payload });
      assert.equal(res.statusCode, 201, res.body);
      made.push(body<Made>(res));
    }
  });
  after(() => t.close());

  async function definition(name: string): Promise<string> {
    const q =
      testDialect === 'sqlite'
        ? sql<{ def: string }>`select sql as def from sqlite_master where type = 'index' and name = ${name}`
        : sql<{ def: string }>`select indexdef as def from pg_indexes where indexname = ${name} and schemaname = current_schema()`;
    const { rows } = await q.execute(t.ctx.db);
    assert.equal(rows.length, 1, name);
    return rows[0]!.def;
  }

  test('the assignee and source_ref indexes hold only rows that have one', async () => {
    for (const [name, column] of [
      ['incidents_assignee_idx', 'assignee_id'],
      ['incidents_source_ref_idx', 'source_ref'],
      ['incidents_open_source_ref_uq', 'source_ref'],
    ] as const)
      assert.match(await definition(name), new RegExp(`where .*\\(?${column} is not null\\)?`, 'is'), name);
    assert.match(await definition('incidents_open_source_ref_uq'), /status/i);
  });

  /** The plan of a query; on PostgreSQL with sequential scans priced out (the table is tiny). */
  const plan = (q: CompiledQuery) => queryPlan(t.ctx.db, q, 'enable_seqscan');

  test('the lookups those indexes serve still use them', async () => {
    // Statistics as an org has them: all three incidents share the org and mode, one has the ref. Without
    // them PostgreSQL prices every index of a tiny table alike and may take the (org, mode, created_at)
    // index of the reports (migration 0049) for the ref's lookup: a tie, not the plan a real org gets.
    if (testDialect === 'postgres') await sql`analyze incidents`.execute(t.ctx.db);
    const byAssignee = t.ctx.db.selectFrom('incidents').select('id').where('assignee_id', '=', owner.id).where('org_id', '=', orgId).where('livemode', '=', 1).compile();
    assert.match(await plan(byAssignee), /incidents_assignee_idx/);
    const open = t.ctx.db.selectFrom('incidents').selectAll().where('org_id', '=', orgId).where('livemode', '=', 1).where('source_ref', '=', 'disk-full').compile();
    assert.match(await plan(open), /incidents_(open_)?source_ref_(idx|uq)/);
    // The dedup lookup finds the open incident of the ref, and only that one.
    const found = await findOpenByRef(t.ctx.db, false, { org_id: orgId, livemode: 1, source_ref: 'disk-full' });
    assert.equal(found?.id, made[1]!.Id);
    assert.equal(await findOpenByRef(t.ctx.db, false, { org_id: orgId, livemode: 1, source_ref: 'none-such' }), undefined);
  });

  test('a second alert of an open source_ref repeats the incident; another ref opens one', async () => {
    const again = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: owner.cookie }, payload: { title: 'From a monitor', source_ref: 'disk-full' } });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(body<Made>(again).Id, made[1]!.Id);
    const other = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: owner.cookie }, payload: { title: 'Other', source_ref: 'cpu-hot' } });
    assert.equal(other.statusCode, 201, other.body);
  });

  test('the status-page token starts with its creation time, so later tokens sort later', () => {
    for (const m of made) {
      assert.match(m.customer_token, /^[0-9a-z]{8}[A-Za-z0-9_-]{24}$/);
      assert.equal(parseInt(m.customer_token.slice(0, 8), 36), Date.parse(m.created_at), m.customer_token);
    }
    for (let i = 1; i < made.length; i++) assert.ok(made[i - 1]!.customer_token.slice(0, 8) <= made[i]!.customer_token.slice(0, 8));
  });

  test('the row insertIncident answers is the stored row, with every column, on both databases', async () => {
    const base: NewIncident = {
      org_id: orgId, livemode: 1, title: 'Built', description: null, status: 'open', priority: 'normal', source: 'api', source_ref: null,
      lat: null, lng: null, location_name: null, assignee_id: null, creator_id: owner.id, customer_token: 'tok-built-1',
      sla_due_at: '2026-11-24T10:00:00.000Z', sla_warn_at: '2026-11-24T09:00:00.000Z', sla_warned_at: null, sla_breached_at: null,
      resolved_at: null, created_at: '2026-11-24T08:00:00.000Z', updated_at: '2026-11-24T08:00:00.000Z',
      integration_id: null, integration_name: null, integration_tool: null, arrival_radius_m: 150,
    };
    const rows: NewIncident[] = [
      base,
      { ...base, customer_token: 'tok-built-2', escalate_at: '2026-11-24T08:15:00.000Z' },
      {
        ...base, customer_token: 'tok-built-3', description: 'Water on the floor', source: 'email', source_ref: 'ref-built', lat: 48.8566, lng: 2.3522,
        location_name: 'Main St 12', assignee_id: owner.id, status: 'in_progress', priority: 'urgent', livemode: 0,
        acknowledged_at: '2026-11-24T08:05:00.000Z', acknowledged_by: owner.id, escalation_level: 2, escalate_at: null, sla_warned_at: '2026-11-24T09:00:00.000Z',
        integration_id: 7, integration_name: 'Mailbox', integration_tool: 'email',
      },
    ];
    for (const row of rows) {
      const [built, stored] = await t.ctx.db.transaction().execute(async (trx) => {
        const made = await insertIncident(trx, row);
        return [made, await trx.selectFrom('incidents').selectAll().where('id', '=', made.id).executeTakeFirstOrThrow()];
      });
      assert.deepEqual(built, stored, row.customer_token);
    }
  });
});
