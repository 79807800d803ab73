import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { buildTestApp, testDialect, type TestApp } from '../../test/helpers.js';
import { FixedQuery, insertRows, type Conflict } from './fixed.js';
import type { DB } from './schema.js';

// Statements compiled once (fixed.ts): the same SQL and rows as Kysely's builder, without building
// the query again on later calls.
describe(`fixed statements on ${testDialect}`, () => {
  let t: TestApp;
  const queries: string[] = [];
  before(async () => {
    t = await buildTestApp({}, { onQuery: (q) => queries.push(q) });
    await sql`create table fx_items (id ${sql.raw(testDialect === 'sqlite' ? 'integer primary key autoincrement' : 'serial primary key')}, name text not null, note text, qty integer not null default 7)`.execute(t.ctx.db);
  });
  after(() => t.close());

  const db = (): Kysely<DB> => t.ctx.db;
  const table = 'fx_items' as keyof DB;
  /** Counts the query builders Kysely starts (insertInto, selectFrom) while `run` runs. */
  async function built<T>(run: () => Promise<T>): Promise<{ result: T; builders: number }> {
    const proto = Kysely.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
    const originals = { insertInto: proto.insertInto!, selectFrom: proto.selectFrom! };
    let builders = 0;
    for (const [name, fn] of Object.entries(originals)) {
      proto[name] = function (this: unknown, ...args: unknown[]) {
        builders++;
        return fn.apply(this, args);
      };
    }
    try {
      return { result: await run(), builders };
    } finally {
      Object.assign(proto, originals);
    }
  }

  test('insertRows answers what Kysely\'s insert answers, and builds the statement once per column list', async () => {
    const first = await built(() => insertRows<{ id: number; name: string; note: string | null; qty: number }>(db(), table, [{ name: 'a', note: null }], 'all'));
    assert.equal(first.builders, 1);
    const kysely = await db().insertInto(table).values({ name: 'b', note: null }).returningAll().executeTakeFirstOrThrow();
    const again = await built(() => insertRows<{ id: number; name: string; note: string | null; qty: number }>(db(), table, [{ name: 'c', note: 'x' }], 'all'));
    assert.equal(again.builders, 0, 'the second call binds the compiled statement');
    assert.deepEqual(first.result.rows[0], { id: (kysely as { id: number }).id - 1, name: 'a', note: null, qty: 7 });
    assert.deepEqual(again.result.rows[0], { id: (kysely as { id: number }).id + 1, name: 'c', note: 'x', qty: 7 });
    // The SQL is the text Kysely builds for the same insert.
    const inserts = queries.filter((q) => q.includes('"fx_items"'));
    assert.equal(inserts[0], inserts[1]);
  });

  test('one row\'s id: the same answer as RETURNING; on SQLite without the clause (the rowid of the insert\'s result)', async () => {
    queries.length = 0;
    const ids = [];
    for (const name of ['id-1', 'id-2']) ids.push((await insertRows<{ id: number }>(db(), table, [{ name, note: null }], 'id')).rows);
    const kysely = await db().insertInto(table).values({ name: 'id-3', note: null }).returning(sql.ref<number>('id').as('id')).executeTakeFirstOrThrow();
    assert.deepEqual(ids, [[{ id: kysely.id - 2 }], [{ id: kysely.id - 1 }]]);
    const stored = await db().selectFrom(table).select([sql.ref<number>('id').as('id'), sql.ref<string>('name').as('name')]).where(sql.ref('id'), '>=', kysely.id - 2).orderBy(sql.ref('id')).execute();
    assert.deepEqual(stored.map((r) => [r.id, r.name]), [[kysely.id - 2, 'id-1'], [kysely.id - 1, 'id-2'], [kysely.id, 'id-3']]);
    const inserts = queries.filter((q) => q.startsWith('insert into "fx_items"')).slice(0, 2);
    assert.equal(inserts.length, 2);
    for (const q of inserts) assert.match(q, testDialect === 'sqlite' ? /^(?!.*returning)/is : /returning "id"/i);
  });

  test('an on-conflict insert: the new row\'s id, and no row (never the previous insert\'s rowid) when the conflict skips it', async () => {
    await sql`create unique index fx_items_open_name on fx_items (name) where qty = 1`.execute(db());
    const skip: Conflict = { name: 'fx-skip', build: (q) => q.onConflict((oc) => oc.column('name').where(sql<boolean>`qty = 1`).doNothing()) };
    const insert = (name: string) => insertRows<{ id: number }>(db(), table, [{ name, qty: 1 }], 'id', skip);
    const first = await insert('once');
    assert.equal(first.rows.length, 1);
    const other = await insert('other');
    assert.equal(other.rows.length, 1);
    const again = await built(() => insert('once'));
    assert.deepEqual(again.result.rows, [], 'skipped: no row');
    assert.equal(again.builders, 0, 'compiled once');
    const stored = await db().selectFrom(table).select(sql.ref<number>('id').as('id')).where(sql.ref('name'), '=', 'once').execute();
    assert.deepEqual(stored, [{ id: first.rows[0]!.id }]);
  });

  test('undefined values are left out (the column default applies), as Kysely leaves them out', async () => {
    const { rows } = await insertRows<{ name: string; note: string | null; qty: number }>(db(), table, [{ name: 'd', note: undefined, qty: undefined }], 'all');
    assert.deepEqual([rows[0]!.name, rows[0]!.note, rows[0]!.qty], ['d', null, 7]);
    const { rows: withQty } = await insertRows<{ qty: number }>(db(), table, [{ name: 'e', qty: 3 }], 'all');
    assert.equal(withQty[0]!.qty, 3, 'another column list is another statement');
  });

  test('several rows bind row by row; rows of different columns go through Kysely', async () => {
    const before = (await db().selectFrom(table).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow());
    await insertRows(db(), table, [{ name: 'r1', qty: 1 }, { name: 'r2', qty: 2 }], 'none');
    const mixed = await built(() => insertRows(db(), table, [{ name: 'r3', qty: 3 }, { name: 'r4', qty: 4, note: 'n' }], 'none'));
    assert.equal(mixed.builders, 1);
    const rows = (await db().selectFrom(table).selectAll().where('name' as never, 'in', ['r1', 'r2', 'r3', 'r4'] as never).orderBy('id' as never).execute()) as unknown as { name: string; note: string | null; qty: number }[];
    assert.deepEqual(
      rows.map((r) => [r.name, r.note, r.qty]),
      [['r1', null, 1], ['r2', null, 2], ['r3', null, 3], ['r4', 'n', 4]],
    );
    const after = (await db().selectFrom(table).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow());
    assert.equal(Number(after.n) - Number(before.n), 4);
  });

  test('a FixedQuery binds its marked values in the compiled order; a statement with an unmarked value is refused', async () => {
    const byNames = new FixedQuery<{ a: string; b: string }>((d, mark) =>
      d.selectFrom(table).select('name' as never).where('name' as never, 'in', [mark('b'), mark('a')] as never).orderBy('name' as never),
    );
    assert.deepEqual((await byNames.execute<{ name: string }>(db(), { a: 'a', b: 'c' })).rows, [{ name: 'a' }, { name: 'c' }]);
    const second = await built(() => byNames.execute<{ name: string }>(db(), { a: 'd', b: 'e' }));
    assert.equal(second.builders, 0);
    assert.deepEqual(second.result.rows, [{ name: 'd' }, { name: 'e' }]);
    const unmarked = new FixedQuery<object>((d) => d.selectFrom(table).select('name' as never).where('name' as never, '=', 'a' as never));
    assert.throws(() => unmarked.execute(db(), {}), /binds only marked values/);
  });
});
