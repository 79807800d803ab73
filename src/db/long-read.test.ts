// Database.longRead (long-read.ts): a read of seconds (a report over a year) leaves the event loop
// free on both engines: on SQLite it runs in a worker thread on a read-only connection of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, testDialect, type TestApp } from '../../test/helpers.js';

describe(`long reads (${testDialect})`, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('the event loop turns while a long read runs, and its rows come back', async () => {
    // A million-row recursion: a third of a second of SQLite, run on the server's own thread it would
    // let no timer fire until it ended.
    const q = sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000000) select count(*) as n from c`.compile(t.ctx.db);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      const rows = await t.ctx.database.longRead(q);
      assert.equal(Number(rows[0]!.n), 1_000_000);
    } finally {
      clearInterval(timer);
    }
    assert.ok(ticks > 0, 'timers fired while the read ran');
  });

  test('it sees what was committed before it, with bound parameters', async () => {
    const name = `long-read-${Date.now()}`;
    await t.ctx.db.insertInto('settings').values({ key: name, value: 'written just before' }).execute();
    const q = t.ctx.db.selectFrom('settings').select('value').where('key', '=', name).compile();
    assert.deepEqual(await t.ctx.database.longRead(q), [{ value: 'written just before' }]);
  });

  test('a failing statement rejects with the database error; the next read works', async () => {
    await assert.rejects(t.ctx.database.longRead(sql`select * from no_such_table`.compile(t.ctx.db)), /no_such_table/);
    assert.deepEqual(await t.ctx.database.longRead(sql<{ one: number }>`select 1 as one`.compile(t.ctx.db)), [{ one: 1 }]);
  });

  test('a write is refused: a long read is read-only (a read-only connection on SQLite, a read-only transaction on PostgreSQL)', async () => {
    const name = `long-read-kept-${Date.now()}`;
    await t.ctx.db.insertInto('settings').values({ key: name, value: 'kept' }).execute();
    await assert.rejects(t.ctx.database.longRead(sql`delete from settings where key = ${name} returning key`.compile(t.ctx.db)), /readonly|read-only/i);
    assert.equal((await t.ctx.db.selectFrom('settings').select('value').where('key', '=', name).executeTakeFirst())?.value, 'kept');
  });
});
