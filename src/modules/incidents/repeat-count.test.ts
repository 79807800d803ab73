import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, testDialect, type TestApp } from '../../../test/helpers.js';
import { pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type IntegrationsWorld } from '../../../test/world.js';

// A repeated trigger carries the count of triggers so far (`alert_repeated {count}`), taken from the
// incident's latest repeat, not by counting every repeat: a monitor that re-fires for days must not
// make each trigger slower than the last (dedup.ts, nextRepeatCount).
describe(`repeat counts on ${testDialect}`, () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  const queries: string[] = [];
  /** Per statement: it travelled in the round trip of the one after it (PostgreSQL, db/pipeline.ts). */
  const withNext: boolean[] = [];
  before(async () => {
    t = await buildTestApp({}, {
      onQuery: (q, _p, _ms, next) => {
        queries.push(q);
        withNext.push(next);
      },
    });
    w = await integrationsWorld(t);
  });
  after(() => t.close());

  test('counts go on from the latest repeat, past other events, without counting the repeats', async () => {
    const url = w.path((await w.integration()).events_url);
    const trigger = async () => {
      const res = await w.call({}, 'POST', url, pdTrigger('', 'count-1', 'critical'));
      assert.equal(res.statusCode, 202, res.body);
    };
    await trigger();
    const [ticket] = await w.tickets({ 'x-api-key': w.liveKey }, '?source_ref=count-1');
    const id = ticket!.Id;
    for (let k = 0; k < 3; k++) await trigger();
    // Another event between repeats: the next repeat still finds the latest count.
    const moved = await w.call({ 'x-api-key': w.liveKey }, 'PATCH', `/v1/tickets/${id}`, { status: 'in_progress' });
    assert.equal(moved.statusCode, 200, moved.body);
    queries.length = 0;
    await trigger();
    const counting = queries.filter((q) => /count\(\*\)/i.test(q) && /incident_events/.test(q));
    assert.deepEqual(counting, [], 'a repeat reads its count from one event');
    const repeats = (await w.timelineTypes(id)).filter((e) => e.type === 'alert_repeated').map((e) => e.data.count);
    assert.deepEqual(repeats, [2, 3, 4, 5]);
  });

  test("a repeat moves the incident's updated_at, with the timeline's insert in one round trip on PostgreSQL", async () => {
    const url = w.path((await w.integration()).events_url);
    const trigger = async () => assert.equal((await w.call({}, 'POST', url, pdTrigger('', 'count-3', 'critical'))).statusCode, 202);
    await trigger();
    const [ticket] = await w.tickets({ 'x-api-key': w.liveKey }, '?source_ref=count-3');
    const updatedAt = async () => (await t.ctx.db.selectFrom('incidents').select('updated_at').where('id', '=', ticket!.Id).executeTakeFirstOrThrow()).updated_at;
    const before = await updatedAt();
    t.clock.advance(60_000);
    queries.length = 0;
    withNext.length = 0;
    await trigger();
    assert.equal(new Date(await updatedAt()).getTime(), new Date(before).getTime() + 60_000);
    const touch = queries.findIndex((q) => /^update "incidents" set "updated_at"/.test(q));
    assert.ok(touch >= 0, queries.join('\n'));
    // The row is locked by the look-up: the touch rides with the statement after it, while the lock is held.
    assert.equal(withNext[touch], testDialect === 'postgres');
    if (testDialect === 'postgres') assert.match(queries[touch + 1]!, /^insert into "incident_events"/);
  });

  test('a new key opens its incident in three round trips on PostgreSQL: the look-up with the insert, the timeline event, the COMMIT', async () => {
    const url = w.path((await w.integration()).events_url);
    const trigger = async (key: string) => assert.equal((await w.call({}, 'POST', url, pdTrigger('', key, 'critical'))).statusCode, 202);
    await trigger('trips-warm'); // the integration and its org's settings are held from here on
    queries.length = 0;
    withNext.length = 0;
    await trigger('trips-new');
    const log = queries.slice();
    const next = withNext.slice();
    const [ticket] = await w.tickets({ 'x-api-key': w.liveKey }, '?source_ref=trips-new');
    assert.ok(ticket, 'the trigger opened an incident');
    if (testDialect === 'postgres') {
      const placed = log.findIndex((q) => /^with open as/.test(q));
      assert.ok(placed >= 0, `the look-up and the insert are one statement:\n${log.join('\n')}`);
      assert.equal(log.filter((q) => /^insert into "incidents"/.test(q) || /^select \* from "incidents"/.test(q)).length, 0, log.join('\n'));
      const begin = log.lastIndexOf('begin', placed);
      const commit = log.indexOf('commit', placed);
      assert.ok(begin >= 0 && commit > placed, log.join('\n'));
      const trips = next.slice(begin, commit + 1).filter((n) => !n).length;
      assert.equal(trips, 3, `three round trips:\n${log.slice(begin, commit + 1).join('\n')}`);
    } else {
      // SQLite looks up, then inserts, under its one writer's lock.
      const lookup = log.findIndex((q) => /^select \* from "incidents" where "org_id" = .*"source_ref" = /.test(q));
      assert.ok(lookup >= 0 && /^insert into "incidents"/.test(log[lookup + 1]!), log.join('\n'));
    }
  });

  test('a latest repeat without a count (not written by Muster): the repeats are counted instead', async () => {
    const url = w.path((await w.integration()).events_url);
    const trigger = async () => assert.equal((await w.call({}, 'POST', url, pdTrigger('', 'count-2', 'critical'))).statusCode, 202);
    await trigger();
    await trigger();
    const [ticket] = await w.tickets({ 'x-api-key': w.liveKey }, '?source_ref=count-2');
    const row = await t.ctx.db.selectFrom('incidents').select(['id', 'org_id', 'livemode']).where('id', '=', ticket!.Id).executeTakeFirstOrThrow();
    await t.ctx.db
      .insertInto('incident_events')
      .values({ incident_id: row.id, org_id: row.org_id, livemode: row.livemode, type: 'alert_repeated', actor_id: null, data: '{}', created_at: new Date().toISOString() })
      .execute();
    await trigger();
    const repeats = (await w.timelineTypes(row.id)).filter((e) => e.type === 'alert_repeated').map((e) => e.data.count);
    // Two repeats so far (count 2 and the one without): the first trigger plus them plus this one.
    assert.deepEqual(repeats, [2, undefined, 4]);
  });
});
