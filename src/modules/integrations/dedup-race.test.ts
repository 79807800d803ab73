import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app.js';
import { loadConfig } from '../../config.js';
import { createContext, type AppContext } from '../../context.js';
import { GENEROUS_RATE_LIMITS, buildTestApp, testDialect, type TestApp } from '../../../test/helpers.js';
import { pdFollowUp, pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type IntegrationsWorld } from '../../../test/world.js';

// The database decides dedup races (a partial unique index), so this holds on PostgreSQL's
// concurrent connections as well as on SQLite's serialised writes.
describe('dedup under concurrency', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  before(async () => {
    t = await buildTestApp();
    w = await integrationsWorld(t);
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

// Issue #31 F6: triggers and resolves of one dedup key racing across two instances on one
// PostgreSQL database answered 409 now and then ("changed while the trigger was handled"), and a
// PagerDuty-speaking tool does not retry a 4xx, so the event was lost. The server now retries until
// it applies. SQLite is one instance by design: there the same calls race on one app.
describe(`Events API: triggers and resolves of one key racing on two instances (${testDialect})`, () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let second: { app: FastifyInstance; ctx: AppContext; dir: string } | undefined;
  before(async () => {
    t = await buildTestApp();
    w = await integrationsWorld(t);
    if (testDialect === 'postgres') {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-second-'));
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        PUBLIC_URL: 'http://muster.test',
        ...GENEROUS_RATE_LIMITS,
        DATA_DIR: dir,
        DATABASE_URL: process.env.TEST_DATABASE_URL!,
        DATABASE_SCHEMA: t.ctx.config.databaseSchema!,
      });
      const ctx = await createContext(config);
      second = { app: await buildApp(ctx), ctx, dir };
    }
  });
  after(async () => {
    if (second) {
      await second.app.close();
      await second.ctx.close();
      fs.rmSync(second.dir, { recursive: true, force: true });
    }
    await t.close();
  });

  const ROUNDS = 3;
  const CALLS = 60;

  test(`${ROUNDS} rounds of ${CALLS} concurrent triggers and resolves: every answer 202, every event applied`, async () => {
    const { key } = await w.integration();
    const instances = [t.app, second?.app ?? t.app];
    for (let round = 1; round <= ROUNDS; round++) {
      const dedup = `flapping-${round}`;
      const events = Array.from({ length: CALLS }, (_, i) => (i % 2 === 0 ? pdTrigger(key, dedup, 'critical') : pdFollowUp(key, dedup, 'resolve')));
      const answers = await Promise.all(events.map((e, i) => instances[i % 2]!.inject({ method: 'POST', url: '/v2/enqueue', payload: e })));
      const statuses = answers.map((r) => r.statusCode);
      assert.deepEqual(statuses, Array<number>(CALLS).fill(202), `round ${round}: ${answers.filter((r) => r.statusCode !== 202).map((r) => r.body).join('\n')}`);

      // Every trigger opened an incident or was counted as a repeat of the open one; every resolve
      // resolved the open one or found none open (dropped, as PagerDuty drops it).
      const tickets = await w.tickets({ 'x-api-key': w.liveKey }, `?source_ref=${dedup}&limit=200`);
      let triggers = 0;
      let resolutions = 0;
      for (const ticket of tickets) {
        const timeline = await w.timelineTypes(ticket.Id);
        triggers += timeline.filter((e) => e.type === 'created' || e.type === 'alert_repeated').length;
        const resolved = timeline.filter((e) => e.type === 'status_changed' && e.data.to === 'resolved').length;
        assert.equal(resolved, ticket.status === 'resolved' ? 1 : 0, `incident ${ticket.Id} resolved once, or not at all while open`);
        resolutions += resolved;
      }
      assert.equal(triggers, CALLS / 2, `round ${round}: all ${CALLS / 2} triggers applied`);
      assert.ok(resolutions <= CALLS / 2);
      assert.ok(tickets.filter((x) => x.status === 'open').length <= 1, 'at most one open incident per key');
      const counted = await w.call({ 'x-api-key': w.liveKey }, 'GET', `/v1/tickets?source_ref=${dedup}`);
      assert.equal(counted.json<{ total: number }>().total, tickets.length);
    }
  });
});
