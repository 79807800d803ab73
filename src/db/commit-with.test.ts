import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, testDialect, type TestApp } from '../../test/helpers.js';
import { beforeCommit, withCommit } from './transaction.js';

// Statements sent in the round trip of a transaction's COMMIT (commit-with.ts): on PostgreSQL one
// query `...; commit`, committed with the transaction's other writes or not at all; on SQLite the
// caller runs them itself (withCommit answers false).
describe(`statements carried by the COMMIT on ${testDialect}`, () => {
  let t: TestApp;
  const queries: string[] = [];
  before(async () => {
    t = await buildTestApp({}, { onQuery: (q) => queries.push(q) });
    await sql`create table cw_items (name text primary key, n integer not null)`.execute(t.ctx.db);
  });
  after(() => t.close());

  const names = async () => (await sql<{ name: string; n: number }>`select name, n from cw_items order by name`.execute(t.ctx.db)).rows.map((r) => `${r.name}=${r.n}`);
  /** A transaction writing `a`, then carrying (or, where nothing is carried, running) `statement` with its COMMIT. */
  const run = (statement: string) =>
    t.ctx.transaction(async (tx) => {
      await sql`insert into cw_items (name, n) values ('a', 1) on conflict (name) do update set n = cw_items.n + 1`.execute(tx.db);
      assert.ok(
        beforeCommit(tx.db, async () => {
          if (!withCommit(tx.db, statement)) await sql.raw(statement).execute(tx.db);
        }) || testDialect === 'sqlite',
      );
      if (testDialect === 'sqlite') await sql.raw(statement).execute(tx.db);
    });

  test('committed with the transaction, in the query of its COMMIT on PostgreSQL', async () => {
    queries.length = 0;
    await run(`insert into cw_items (name, n) values ('b', 5)`);
    if (testDialect === 'postgres') {
      assert.equal(queries.at(-1), `insert into cw_items (name, n) values ('b', 5);\ncommit`, queries.join('\n'));
      assert.equal(queries.filter((q) => /^commit$/i.test(q)).length, 0, 'no COMMIT of its own');
    }
    assert.deepEqual(await names(), ['a=1', 'b=5']);
  });

  test('a carried statement that fails rolls the transaction back, and the connection serves the next one', async () => {
    await assert.rejects(run(`insert into cw_items (name, n) values ('b', 6)`), /duplicate key|UNIQUE constraint/);
    assert.deepEqual(await names(), ['a=1', 'b=5'], 'the first write of the failed transaction undone');
    for (let i = 0; i < 12; i += 1) await run(`insert into cw_items (name, n) values ('c${i}', ${i})`); // more than the pool's connections
    assert.equal((await names()).length, 14);
    assert.ok((await names()).includes('a=13'));
  });

  test('another transaction begun inside (a long read) commits on its own; the carriage stays with the outer one', async () => {
    if (testDialect === 'sqlite') return; // SQLite's long reads run on a connection of their own, outside any write transaction
    queries.length = 0;
    await t.ctx.transaction(async (tx) => {
      await sql`insert into cw_items (name, n) values ('d', 1)`.execute(tx.db);
      beforeCommit(tx.db, async () => void withCommit(tx.db, `insert into cw_items (name, n) values ('e', 1)`));
      const rows = await t.ctx.database.longRead(sql<{ n: number }>`select count(*)::int as n from cw_items`.compile(t.ctx.db));
      assert.equal(rows[0]!.n, 14, 'the long read sees what was committed before, not this transaction');
    });
    assert.ok((await names()).includes('d=1') && (await names()).includes('e=1'));
    assert.equal(queries.filter((q) => /^commit$/i.test(q)).length, 1, 'the long read’s own COMMIT');
    assert.ok(queries.some((q) => q.endsWith(`('e', 1);\ncommit`)), queries.join('\n'));
  });
});
