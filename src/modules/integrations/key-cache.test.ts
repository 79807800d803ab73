// A tool's key is authenticated from memory (key-cache.ts): after the first events of an org no
// request reads its integration, and a change or revocation made on this instance holds for the very
// next event. Two instances through Redis: test/cluster/integration-keys.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';

describe('the integration key cache', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  /** Reads of the integrations table (a key's, or an org's integrations). */
  let reads = 0;
  const live = () => ({ 'x-api-key': w.liveKey });
  before(async () => {
    t = await buildTestApp({}, { onQuery: (sql) => void (/^select\b.* from "integrations"/i.test(sql) && (reads += 1)) });
    w = await integrationsWorld(t);
  });
  after(() => t.close());

  const send = (i: CreatedIntegration, ref: string, severity = 'critical') => w.call({}, 'POST', w.path(i.events_url), pdTrigger('', ref, severity));
  const priorityOf = async (ref: string) => (await w.tickets(live(), `?source_ref=${ref}`))[0]!.priority;

  test('after the first two events no event reads its integration; a change holds for the next event, a revocation refuses it', async () => {
    const i = await w.integration();
    reads = 0;
    assert.equal((await send(i, 'k-1')).statusCode, 202);
    assert.equal(reads, 1, 'the first event reads its key');
    assert.equal((await send(i, 'k-2')).statusCode, 202);
    assert.equal(reads, 2, 'the second reads the org’s integrations once');
    for (let n = 3; n <= 6; n += 1) assert.equal((await send(i, `k-${n}`)).statusCode, 202);
    assert.equal(reads, 2, 'then none');

    await w.call(live(), 'PATCH', `/v1/integrations/${i.id}`, { priority_map: { critical: 'low' } });
    assert.equal((await send(i, 'k-7')).statusCode, 202);
    assert.equal(await priorityOf('k-7'), 'low', 'the changed priority map holds for the next event');

    assert.equal((await w.call(live(), 'DELETE', `/v1/integrations/${i.id}`)).statusCode, 200);
    const refused = await send(i, 'k-8');
    assert.equal(refused.statusCode, 401, 'revoked: refused at once');
  });

  test('a new integration of a cached org is found with its own settings; a key one character off is refused', async () => {
    const first = await w.integration();
    for (const ref of ['n-1', 'n-2', 'n-3']) assert.equal((await send(first, ref)).statusCode, 202);
    const second = await w.integration(live(), { name: 'Second', priority_map: { critical: 'normal' } });
    assert.equal((await send(second, 'n-4')).statusCode, 202);
    assert.equal((await send(second, 'n-5')).statusCode, 202);
    assert.equal(await priorityOf('n-5'), 'normal', 'the second integration’s own settings');
    assert.equal((await send(first, 'n-6')).statusCode, 202);
    assert.equal(await priorityOf('n-6'), 'urgent', 'the first keeps its own');
    const wrong = await w.call({}, 'POST', w.path(first.events_url).replace(first.key, `${first.key.slice(0, -1)}${first.key.endsWith('A') ? 'B' : 'A'}`), pdTrigger('', 'n-7'));
    assert.equal(wrong.statusCode, 401);
  });

  test('a heartbeat is read each time (its row changes with every ping)', async () => {
    const beat = await w.integration(live(), { name: 'Beat', type: 'heartbeat', interval_seconds: 60 });
    const url = w.path(beat.events_url);
    reads = 0;
    for (let n = 0; n < 3; n += 1) assert.equal((await w.call({}, 'POST', url, {})).statusCode < 300, true);
    assert.equal(reads, 3, 'one read per ping, none of the org’s');
  });
});
