// Every trigger of every tool looks up the open incident of its dedup key (dedup.ts). Its plan must
// search by the key, not read the org's incidents: on a database whose statistics were gathered
// (SQLite after an operator's ANALYZE; PostgreSQL's autovacuum) the lookup once went by a range
// `source_ref > NULL` over every incident of the org with a ref (SQLite), growing with each trigger.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { buildTestApp, queryPlan, type TestApp } from '../../../test/helpers.js';
import { pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type IntegrationsWorld } from '../../../test/world.js';

describe('the dedup lookup’s plan', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let lookup: { sql: string; parameters: readonly unknown[] } | undefined;
  /** PostgreSQL: a trigger's look-up and insert, one statement (incidents.repository.ts, lockOpenOrInsert). */
  let combined: { sql: string; parameters: readonly unknown[] } | undefined;
  before(async () => {
    t = await buildTestApp({}, {
      onQuery: (text, parameters) => {
        if (/^select \* from "incidents" where "org_id" = .*"source_ref" = /i.test(text)) lookup = { sql: text, parameters };
        if (/^with open as \(+select \* from "incidents" where "org_id" = .*"source_ref" = /i.test(text)) combined = { sql: text, parameters };
      },
    });
    w = await integrationsWorld(t);
  });
  after(() => t.close());

  test('searches by the dedup key once the tables have statistics', async () => {
    const i = await w.integration();
    const url = w.path(i.events_url);
    const db = t.ctx.db;
    const sqlite = t.ctx.database.dialect === 'sqlite';
    // Statistics gathered while the org had incidents but none from a tool (its first weeks), then the tool's.
    for (let n = 0; n < 20; n += 1) assert.equal((await w.call({ 'x-api-key': w.liveKey }, 'POST', '/v1/tickets', { title: `Walk-in ${n}` })).statusCode, 201);
    await (sqlite ? sql`analyze` : sql`analyze incidents`).execute(db);
    for (let n = 0; n < 60; n += 1) assert.equal((await w.call({}, 'POST', url, pdTrigger('', `plan-${n}`, 'critical'))).statusCode, 202);
    for (let n = 0; n < 20; n += 1) assert.equal((await w.call({}, 'POST', url, { routing_key: '', event_action: 'resolve', dedup_key: `plan-${n}` })).statusCode, 202);
    assert.ok(lookup, 'the lookup ran');
    const plan = await queryPlan(db, CompiledQuery.raw(lookup.sql, [...lookup.parameters]), 'enable_seqscan');
    if (sqlite) {
      assert.match(plan, /source_ref=\?/, plan);
      assert.doesNotMatch(plan, /source_ref>\?|SCAN/, plan);
    } else {
      assert.match(plan, /Index Cond: .*source_ref = /, plan);
      assert.ok(combined, 'the trigger looked up and inserted in one statement');
      const triggerPlan = await queryPlan(db, CompiledQuery.raw(combined.sql, [...combined.parameters]), 'enable_seqscan');
      assert.match(triggerPlan, /Index Cond: .*source_ref = /, triggerPlan);
      assert.doesNotMatch(triggerPlan, /Seq Scan/, triggerPlan);
    }
  });
});
