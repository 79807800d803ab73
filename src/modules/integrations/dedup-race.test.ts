import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { pdTrigger } from '../../../test/integrations-payloads.js';
import { buildWorld, type World } from '../../../test/integrations-world.js';

// The database decides dedup races (a partial unique index), so this holds on PostgreSQL's
// concurrent connections as well as on SQLite's serialised writes.
describe('dedup under concurrency', () => {
  let t: TestApp;
  let w: World;
  before(async () => {
    t = await buildTestApp();
    w = await buildWorld(t);
  });
  after(() => t.close());

  test('20 concurrent identical triggers open exactly one incident, counted 2..20', async () => {
    const i = await w.integration();
    const url = w.path(i.events_url);
    const answers = await Promise.all(Array.from({ length: 20 }, () => w.call({}, 'POST', url, pdTrigger('', 'race-1', 'critical'))));
    assert.deepEqual(answers.map((r) => r.statusCode), Array(20).fill(202), answers.map((r) => r.body).join('\n'));
    const tickets = await w.tickets({ 'x-api-key': w.liveKey }, '?source_ref=race-1');
    assert.equal(tickets.length, 1);
    const repeats = (await w.timelineTypes(tickets[0]!.Id)).filter((e) => e.type === 'alert_repeated').map((e) => e.data.count as number);
    assert.deepEqual(repeats.sort((a, b) => a - b), Array.from({ length: 19 }, (_, k) => k + 2));
    const open = await w.call({ 'x-api-key': w.liveKey }, 'GET', '/v1/tickets?status=open');
    assert.equal(open.json<{ total: number }>().total, 1, 'the counters count one incident');
  });

  test('20 concurrent POST /v1/tickets with one source_ref: one 201, nineteen 200 with the same incident', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => w.call({ 'x-api-key': w.liveKey }, 'POST', '/v1/tickets', { title: 'Pump down', source_ref: 'race-2' })),
    );
    const codes = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [...Array<number>(19).fill(200), 201].sort(), answers.map((r) => r.body).join('\n'));
    assert.equal(new Set(answers.map((r) => r.json<{ Id: number }>().Id)).size, 1);
  });
});
