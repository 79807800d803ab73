import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, testDialect, type TestApp } from '../../../test/helpers.js';
import { pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type IntegrationsWorld } from '../../../test/world.js';

// Issue #32: reporters see incident numbers (`#63` in their email). A dedup repeat used to reach an
// INSERT that ON CONFLICT refused after it had taken the next id (a PostgreSQL sequence value,
// SQLite's AUTOINCREMENT counter): five repeats moved the next new incident from #63 to #69.
describe(`a dedup repeat takes no incident number (${testDialect})`, () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  const live = () => ({ 'x-api-key': w.liveKey });
  before(async () => {
    t = await buildTestApp();
    w = await integrationsWorld(t);
  });
  after(() => t.close());

  const create = async (body: Record<string, unknown>, status: number) => {
    const res = await w.call(live(), 'POST', '/v1/tickets', body);
    assert.equal(res.statusCode, status, res.body);
    return res.json<{ Id: number }>().Id;
  };

  test('POST /v1/tickets: five repeats of a source_ref, then the next new incident is the next number', async () => {
    const first = await create({ title: 'Pump 3 down', source_ref: 'pump-3' }, 201);
    for (let k = 0; k < 5; k++) assert.equal(await create({ title: 'Pump 3 down', source_ref: 'pump-3' }, 200), first);
    assert.equal(await create({ title: 'Something else' }, 201), first + 1);
  });

  test('Events API: five repeated triggers, then a new dedup key opens the next number', async () => {
    const url = w.path((await w.integration()).events_url);
    const trigger = async (key: string) => assert.equal((await w.call({}, 'POST', url, pdTrigger('', key, 'critical'))).statusCode, 202);
    await trigger('disk-1');
    const [opened] = await w.tickets(live(), '?source_ref=disk-1');
    for (let k = 0; k < 5; k++) await trigger('disk-1');
    await trigger('disk-2');
    const [next] = await w.tickets(live(), '?source_ref=disk-2');
    assert.equal(next!.Id, opened!.Id + 1);
    const repeats = (await w.timelineTypes(opened!.Id)).filter((e) => e.type === 'alert_repeated');
    assert.equal(repeats.length, 5, 'the repeats were recorded all the same');
  });
});
