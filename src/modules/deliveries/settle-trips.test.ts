import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, testDialect, type TestApp } from '../../../test/helpers.js';
import { queueDelivery } from './outbox.js';
import { processDue, type Senders } from './worker.js';

// An attempt's record and the delivery's settling need no answer: on PostgreSQL they travel with the
// settling transaction's COMMIT, one round trip (db/pipeline.ts); on both engines they are in place after it.
describe(`an attempt recorded and settled on ${testDialect}`, () => {
  let t: TestApp;
  const logged: { sql: string; withNext: boolean }[] = [];
  before(async () => {
    t = await buildTestApp({}, { onQuery: (sql, _p, _ms, withNext) => logged.push({ sql, withNext }) });
  });
  after(() => t.close());

  test('one round trip on PostgreSQL, the attempt and the status in place', async () => {
    await t.ctx.transaction((tx) => queueDelivery(t.ctx, tx, { kind: 'webhook', topic: 'trips.test', recipient: 'https://example.test/hook', payload: { n: 1 }, mode: 'test' }));
    const sent = async () => ({ outcome: 'sent' as const, statusCode: 200 });
    const senders = new Proxy({} as Senders, { get: () => sent });
    logged.length = 0;
    assert.equal(await processDue(t.ctx, senders), 1);
    const start = logged.findIndex((l) => /^insert into "outbox_attempts"/.test(l.sql));
    assert.ok(start > 0, logged.map((l) => l.sql).join('\n'));
    const settling = logged.slice(start - 1); // its BEGIN, the attempt, the settling, the COMMIT
    assert.deepEqual(
      settling.map((l) => l.sql.replace(/^begin immediate$/, 'begin').split(' ').slice(0, 3).join(' ')), // SQLite's BEGIN IMMEDIATE
      ['begin', 'insert into "outbox_attempts"', 'update "outbox" set', 'commit'],
    );
    const trips = settling.filter((l) => !l.withNext).length;
    assert.equal(trips, testDialect === 'postgres' ? 1 : 4, 'PostgreSQL: BEGIN, the attempt and the settling travel with the COMMIT');
    const row = await t.ctx.db.selectFrom('outbox').select(['id', 'status']).where('topic', '=', 'trips.test').executeTakeFirstOrThrow();
    assert.equal(row.status, 'sent');
    const attempts = await t.ctx.db.selectFrom('outbox_attempts').select('outcome').where('outbox_id', '=', row.id).execute();
    assert.deepEqual(attempts, [{ outcome: 'sent' }]);
  });
});
