import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type Dialect,
} from 'kysely';
import { compiledOnce, FixedQuery, type Mark } from './fixed.js';
import type { DB } from './schema.js';

// The one compile-once mechanism (fixed.ts): shapes are kept per adapter and key, and each call's
// values are bound along the marks. Compile-only Kyselys (no connection) of both dialects.
const sqliteDialect = (): Dialect => ({
  createAdapter: () => new SqliteAdapter(),
  createDriver: () => new DummyDriver(),
  createIntrospector: (db) => new SqliteIntrospector(db),
  createQueryCompiler: () => new SqliteQueryCompiler(),
});
const postgresDialect = (): Dialect => ({
  createAdapter: () => new PostgresAdapter(),
  createDriver: () => new DummyDriver(),
  createIntrospector: (db) => new PostgresIntrospector(db),
  createQueryCompiler: () => new PostgresQueryCompiler(),
});

describe('compiledOnce', () => {
  const build = (db: Kysely<DB>) => (m: Mark) =>
    db.selectFrom('incidents').select('id').where('org_id', '=', m('org')).where('status', 'in', [m('b'), m('a')]).limit(m('n'));

  test('two dialects with one key each compile their own statement', () => {
    const lite = new Kysely<DB>({ dialect: sqliteDialect() });
    const pg = new Kysely<DB>({ dialect: postgresDialect() });
    const key = `same key ${Math.random()}`;
    const a = compiledOnce(lite, key, build(lite), { org: 1, a: 'open', b: 'closed', n: 5 });
    const b = compiledOnce(pg, key, build(pg), { org: 2, a: 'open', b: 'closed', n: 6 });
    assert.equal(a.sql, 'select "id" from "incidents" where "org_id" = ? and "status" in (?, ?) limit ?');
    assert.equal(b.sql, 'select "id" from "incidents" where "org_id" = $1 and "status" in ($2, $3) limit $4');
    // And asked again, each answers its own dialect's statement.
    assert.equal(compiledOnce(lite, key, build(lite), { org: 1, a: 'x', b: 'y', n: 1 }).sql, a.sql);
    assert.equal(compiledOnce(pg, key, build(pg), { org: 1, a: 'x', b: 'y', n: 1 }).sql, b.sql);
  });

  test('a shape is built once per adapter and key; another adapter (even of the same dialect) builds its own', () => {
    const one = new Kysely<DB>({ dialect: sqliteDialect() });
    const two = new Kysely<DB>({ dialect: sqliteDialect() });
    let builds = 0;
    const counted = (db: Kysely<DB>) => (m: Mark) => {
      builds++;
      return build(db)(m);
    };
    const values = { org: 1, a: 'open', b: 'closed', n: 5 };
    compiledOnce(one, 'k', counted(one), values);
    compiledOnce(one, 'k', counted(one), values);
    assert.equal(builds, 1);
    compiledOnce(one, 'other key', counted(one), values);
    assert.equal(builds, 2);
    compiledOnce(two, 'k', counted(two), values);
    assert.equal(builds, 3);
  });

  test('each call binds its own values in the compiled order, by name, index or row', () => {
    const db = new Kysely<DB>({ dialect: postgresDialect() });
    const first = compiledOnce(db, 'bind by name', build(db), { org: 7, a: 'open', b: 'closed', n: 3 });
    assert.deepEqual(first.parameters, [7, 'closed', 'open', 3]);
    const second = compiledOnce(db, 'bind by name', build(db), { org: 8, a: 'resolved', b: 'in_progress', n: 9 });
    assert.deepEqual(second.parameters, [8, 'in_progress', 'resolved', 9]);

    const byIndex = (m: Mark) => db.selectFrom('incidents').select('id').where('priority', '=', m(1)).where('id', '=', m(0));
    assert.deepEqual(compiledOnce(db, 'bind by index', byIndex, [42, 'high']).parameters, ['high', 42]);
    assert.deepEqual(compiledOnce(db, 'bind by index', byIndex, [43, 'low']).parameters, ['low', 43]);

    const rows = (m: Mark) => db.insertInto('incident_counts').values([0, 1].map((r) => ({ org_id: m(r, 'org_id'), livemode: m(r, 'livemode'), status: m(r, 'status'), priority: m(r, 'priority'), n: m(r, 'n') })));
    const bound = compiledOnce(db, 'bind rows', rows, [
      { org_id: 1, livemode: 1, status: 'open', priority: 'high', n: 2 },
      { org_id: 3, livemode: 0, status: 'closed', priority: 'low', n: 4 },
    ]);
    assert.deepEqual(bound.parameters, [1, 1, 'open', 'high', 2, 3, 0, 'closed', 'low', 4]);
  });

  test('an unmarked value is a constant of the shape only when asked for; otherwise refused', () => {
    const db = new Kysely<DB>({ dialect: sqliteDialect() });
    const withConstant = (m: Mark) => db.selectFrom('incidents').select('id').where('livemode', '=', 1).where('id', '=', m(0));
    assert.throws(() => compiledOnce(db, 'constant refused', withConstant, [5]), /binds only marked values/);
    assert.deepEqual(compiledOnce(db, 'constant kept', withConstant, [5], { constants: true }).parameters, [1, 5]);
    assert.deepEqual(compiledOnce(db, 'constant kept', withConstant, [6], { constants: true }).parameters, [1, 6]);
  });

  test('a FixedQuery keeps one shape per adapter', async () => {
    const ran: { sql: string; parameters: readonly unknown[] }[] = [];
    const record = (dialect: Dialect): Dialect => ({
      ...dialect,
      createDriver: () => {
        const driver = new DummyDriver();
        const acquire = driver.acquireConnection.bind(driver);
        driver.acquireConnection = async () => {
          const connection = await acquire();
          connection.executeQuery = async (q) => {
            ran.push({ sql: q.sql, parameters: q.parameters });
            return { rows: [] };
          };
          return connection;
        };
        return driver;
      },
    });
    const q = new FixedQuery<{ id: number }>((db, m) => db.selectFrom('incidents').select('id').where('id', '=', m('id')));
    await q.execute(new Kysely<DB>({ dialect: record(sqliteDialect()) }), { id: 1 });
    await q.execute(new Kysely<DB>({ dialect: record(postgresDialect()) }), { id: 2 });
    assert.deepEqual(ran, [
      { sql: 'select "id" from "incidents" where "id" = ?', parameters: [1] },
      { sql: 'select "id" from "incidents" where "id" = $1', parameters: [2] },
    ]);
  });
});
