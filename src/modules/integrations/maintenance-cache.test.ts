// Which maintenance window covers a tool's event is answered from memory (maintenance-cache.ts): an
// org's windows of the hour ahead are read once, a window planned, changed or ended holds for the
// very next event, and one beginning or ending inside the hour does so on time without a read.
// Two instances through Redis: test/cluster/credential-cache.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';
import { HOUR, MINUTE } from '../../lib/clock.js';

describe('the maintenance window cache', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let base: string;
  /** Reads of the maintenance windows table. */
  let reads = 0;
  const live = () => ({ 'x-api-key': w.liveKey });
  const at = (ms: number) => new Date(t.clock.nowMs() + ms).toISOString();
  before(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => void (/^select\b.* from "maintenance_windows"/i.test(sql) && (reads += 1)) });
    w = await integrationsWorld(t);
    const [org] = (await w.call(live(), 'GET', '/v1/orgs')).json<{ orgs: { slug: string }[] }>().orgs;
    base = `/v1/orgs/${org!.slug}/maintenance-windows`;
  });
  after(() => t.close());

  let n = 0;
  /** What the tool's next trigger (a new dedup key) came to: 'opened' or 'suppressed'. */
  const outcome = async (i: CreatedIntegration) => {
    const ref = `mc-${(n += 1)}`;
    assert.equal((await w.call({}, 'POST', w.path(i.events_url), pdTrigger('', ref, 'critical'))).statusCode, 202);
    return (await w.tickets(live(), `?source_ref=${ref}`)).length === 1 ? 'opened' : 'suppressed';
  };
  const plan = async (fields: object) => {
    const res = await w.call(live(), 'POST', base, fields);
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: number }>();
  };

  test('read once for the hour; planned, then ended, a window holds for the very next event', async () => {
    const i = await w.integration();
    const other = await w.integration(live(), { name: 'Elsewhere' });
    reads = 0;
    for (let k = 0; k < 4; k += 1) assert.equal(await outcome(i), 'opened');
    assert.equal(reads, 1, 'the org’s windows read once for four events');

    const window = await plan({ start: at(0), end: at(HOUR), integration_ids: [i.id] });
    assert.equal(await outcome(i), 'suppressed', 'planned: the next event is suppressed');
    assert.equal(await outcome(i), 'suppressed');
    assert.equal((await w.call(live(), 'PATCH', `${base}/${window.id}`, { integration_ids: [other.id] })).statusCode, 200);
    assert.equal(await outcome(i), 'opened', 'changed to cover another integration: the next event opens');
    assert.equal((await w.call(live(), 'PATCH', `${base}/${window.id}`, { integration_ids: null })).statusCode, 200);
    assert.equal(await outcome(i), 'suppressed', 'changed to cover every integration');
    assert.equal((await w.call(live(), 'DELETE', `${base}/${window.id}`)).statusCode, 200);
    assert.equal(await outcome(i), 'opened', 'ended: the next event opens');
  });

  test('a window beginning and ending within the hour does so on time without a read; past the hour the database answers', async () => {
    const i = await w.integration(live(), { name: 'Timed' });
    await plan({ start: at(10 * MINUTE), end: at(20 * MINUTE), integration_ids: [i.id] });
    await plan({ start: at(90 * MINUTE), end: at(100 * MINUTE), integration_ids: [i.id] });
    assert.equal(await outcome(i), 'opened', 'not begun');
    reads = 0;
    t.clock.advance(10 * MINUTE);
    assert.equal(await outcome(i), 'suppressed', 'begun');
    t.clock.advance(10 * MINUTE);
    assert.equal(await outcome(i), 'opened', 'ended');
    assert.equal(reads, 0, 'both from memory');
    t.clock.advance(70 * MINUTE);
    assert.equal(await outcome(i), 'suppressed', 'a window beginning after the hour held: read from the database');
    assert.equal(reads, 1);
  });

  test('an org with more windows in the hour than are held is read on every event', async () => {
    const i = await w.integration(live(), { name: 'Busy' });
    const other = await w.integration(live(), { name: 'Other' });
    // 101 windows of another integration ending late, and the one covering ours ending first: the
    // held list, ending last first, would not reach it.
    for (let k = 0; k < 101; k += 1) await plan({ start: at(0), end: at(HOUR - k * 1000), integration_ids: [other.id] });
    await plan({ start: at(0), end: at(30 * MINUTE), integration_ids: [i.id] });
    reads = 0;
    assert.equal(await outcome(i), 'suppressed');
    assert.equal(await outcome(i), 'suppressed');
    assert.equal(reads, 3, 'the org’s windows once (too many to hold), then the integration’s active ones each time');
  });
});
