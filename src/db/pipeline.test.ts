import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import type * as Pg from 'pg';
import { buildTestApp, testDialect, type TestApp } from '../../test/helpers.js';
import { SchemaPostgresDialect } from './pg-introspector.js';
import { CarriedStatementError, withNext } from './pipeline.js';
import type { DB } from './schema.js';

// The round trips a PostgreSQL transaction does not need (db/pipeline.ts): its BEGIN travels with its
// first statement, a write marked withNext with the statement after it. On SQLite withNext changes nothing.
describe(`writes sent with the next statement on ${testDialect}`, () => {
  let t: TestApp;
  const logged: { sql: string; withNext: boolean }[] = [];
  before(async () => {
    t = await buildTestApp({}, { onQuery: (q, _p, _ms, next) => logged.push({ sql: q, withNext: next }) });
    await sql`create table pl_items (name text primary key, n integer not null)`.execute(t.ctx.db);
  });
  after(() => t.close());

  const insert = (name: string, n: number) => sql`insert into pl_items (name, n) values (${name}, ${n})`.compile(t.ctx.db);
  const items = async (db: Kysely<DB> = t.ctx.db) => (await sql<{ name: string; n: number }>`select name, n from pl_items order by name`.execute(db)).rows.map((r) => `${r.name}=${r.n}`);

  test("a write marked withNext is in place for the transaction's next statement, and committed with it", async () => {
    logged.length = 0;
    const seen = await t.ctx.transaction(async (tx) => {
      const r = await tx.db.executeQuery(withNext(insert('a', 1)));
      assert.deepEqual(r.rows, []);
      return items(tx.db);
    });
    assert.deepEqual(seen, ['a=1'], 'the read after it sees it');
    assert.deepEqual(await items(), ['a=1']);
    const mine = logged.find((l) => l.sql.startsWith('insert into pl_items'))!;
    assert.equal(mine.withNext, testDialect === 'postgres', 'the log tells which statements travelled with the next (PostgreSQL only)');
  });

  test('its values stay bound parameters: quotes, backslashes, placeholders and any text arrive as written', async () => {
    const odd = `o'clock \\ $1 ; commit; -- 'x' \u00e9\u{1F692}`;
    await t.ctx.transaction(async (tx) => {
      await tx.db.executeQuery(withNext(insert(odd, 2)));
    });
    assert.ok((await items()).includes(`${odd}=2`));
  });

  test('a statement that answers rows cannot be marked', () => {
    assert.throws(() => withNext(sql`select name from pl_items`.compile(t.ctx.db)), /writes that answer no rows/);
    assert.throws(() => withNext(sql`insert into pl_items (name, n) values ('r', 1) returning name`.compile(t.ctx.db)), /writes that answer no rows/);
  });

  test('outside a transaction it is written at once', async () => {
    await t.ctx.db.executeQuery(withNext(insert('b', 3)));
    assert.ok((await items()).includes('b=3'));
  });

  test('a carried write that fails fails the statement it travelled with, under its own name, and the transaction is undone', async () => {
    const failed = t.ctx.transaction(async (tx) => {
      await tx.db.executeQuery(insert('c', 4));
      await tx.db.executeQuery(withNext(insert('a', 5))); // 'a' exists
      await items(tx.db);
    });
    if (testDialect === 'postgres') {
      const err = await failed.then(
        () => assert.fail('committed'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof CarriedStatementError, String(err));
      assert.match(err.message, /insert into pl_items/);
      assert.equal((err as { code?: string }).code, undefined, "no caller takes it for its own statement's error");
      assert.equal((err.cause as { code?: string }).code, '23505');
    } else {
      await assert.rejects(failed, /UNIQUE constraint/);
    }
    assert.ok(!(await items()).includes('c=4'), 'the first write of the failed transaction undone');
    for (let i = 0; i < 12; i += 1) {
      // more transactions than the pool has connections: none is left in a failed state
      await t.ctx.transaction(async (tx) => {
        await tx.db.executeQuery(withNext(insert(`d${i}`, i)));
      });
    }
    assert.equal((await items()).filter((x) => x.startsWith('d')).length, 12);
  });

  test("the first statement's own error keeps its code when the BEGIN travelled with it", async () => {
    const err = await t.ctx
      .transaction(async (tx) => {
        await tx.db.executeQuery(insert('a', 6));
      })
      .then(
        () => assert.fail('committed'),
        (e: unknown) => e,
      );
    assert.equal((err as { code?: string }).code, testDialect === 'postgres' ? '23505' : 'SQLITE_CONSTRAINT_PRIMARYKEY');
  });

  test('a transaction rolled back before anything was sent leaves nothing behind', async () => {
    await assert.rejects(
      t.ctx.transaction(async (tx) => {
        await tx.db.executeQuery(withNext(insert('e', 7)));
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.ok(!(await items()).includes('e=7'));
  });

  // The round trips themselves: answers (ReadyForQuery) counted on the wire of a pool of the test's own.
  if (testDialect === 'postgres') {
    describe('round trips (PostgreSQL)', () => {
      let pool: pg.Pool;
      let db: Kysely<DB>;
      let trips = 0;
      before(async () => {
        const schema = t.ctx.database.schema!;
        pool = new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL, max: 2, options: `-c search_path=${schema}` });
        pool.on('connect', (client) => (client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', () => void (trips += 1)));
        db = new Kysely<DB>({ dialect: new SchemaPostgresDialect(pool, pg as unknown as typeof Pg, schema) }); // pg's module object, as database.ts requires it
        await sql`select 1`.execute(db); // connected: the answers of the start are not counted
      });
      after(() => db.destroy());

      const counted = async (fn: () => Promise<unknown>) => {
        trips = 0;
        await fn();
        return trips;
      };

      test('BEGIN, a statement, a write marked withNext and COMMIT: two round trips', async () => {
        const n = await counted(() =>
          db.transaction().execute(async (trx) => {
            await trx.executeQuery(insert('f', 8));
            await trx.executeQuery(withNext(insert('g', 9)));
          }),
        );
        assert.equal(n, 2);
        assert.ok((await items()).includes('f=8') && (await items()).includes('g=9'));
      });

      test('a transaction that sent nothing costs none, committed or rolled back', async () => {
        assert.equal(await counted(() => db.transaction().execute(async () => undefined)), 0);
        const rolledBack = counted(() =>
          db.transaction().execute(async (trx) => {
            await trx.executeQuery(withNext(insert('h', 10)));
            throw new Error('undo');
          }),
        );
        await assert.rejects(rolledBack, /undo/);
        assert.equal(trips, 0);
        assert.ok(!(await items()).includes('h=10'));
      });

      test('a transaction of withNext writes only: one round trip with its BEGIN and COMMIT', async () => {
        const n = await counted(() =>
          db.transaction().execute(async (trx) => {
            await trx.executeQuery(withNext(insert('i', 11)));
            await trx.executeQuery(withNext(insert('j', 12)));
          }),
        );
        assert.equal(n, 1);
        assert.ok((await items()).includes('i=11') && (await items()).includes('j=12'));
      });

      test('a transaction with an isolation level sends it as its own first statement', async () => {
        const n = await counted(() =>
          db
            .transaction()
            .setIsolationLevel('serializable')
            .execute(async (trx) => {
              const { rows } = await sql<{ level: string }>`select current_setting('transaction_isolation') as level`.execute(trx);
              assert.equal(rows[0]!.level, 'serializable');
            }),
        );
        assert.equal(n, 3);
      });
    });
  }
});
