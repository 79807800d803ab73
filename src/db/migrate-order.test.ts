import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { dropTestSchema, testDialect, testSchemaName } from '../../test/helpers.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

// Migration numbers are reserved per piece of work and land out of order: a database that ran
// 0016 before 0010 and 0015 existed (an upgrade from an earlier release) must still get them.
const schema = testDialect === 'postgres' ? testSchemaName('mo') : undefined;
const database = openDatabase(
  testDialect === 'postgres' ? { databaseUrl: process.env.TEST_DATABASE_URL, databaseSchema: schema } : { sqliteFile: ':memory:' },
);
after(async () => {
  await database.destroy();
  if (schema) await dropTestSchema(schema);
});

test(`a migration numbered below one already run is still applied on ${testDialect}`, async () => {
  const late = ['0010-web-console', '0015-retention'];
  // The release that had 0016 but neither 0010 nor 0015 (later migrations may build on those two).
  const earlier = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0017' && !late.includes(name)));
  assert.ok(Object.keys(earlier).includes('0016-integrations'));
  await migrateToLatest(database, earlier);

  const { results } = await migrateToLatest(database);
  const applied = results?.map((r) => [r.migrationName, r.status]) ?? [];
  assert.deepEqual(applied.slice(0, late.length), late.map((name) => [name, 'Success']));
  assert.deepEqual(applied.slice(late.length), Object.keys(migrations).filter((name) => name > '0017').sort().map((name) => [name, 'Success']));
  // 0010 added event_types.location: the column is there.
  await sql`select location from event_types limit 1`.execute(database.db);
});

// A migration run is one transaction on both engines (SQLite's DDL is transactional too: src/db/sqlite-dialect.ts):
// a failing migration leaves none of the run's migrations applied, so a fixed release starts again from the same point.
test(`a run whose last migration fails applies none of its migrations on ${testDialect}`, async () => {
  const side = testDialect === 'postgres' ? testSchemaName('ma') : undefined;
  const db = openDatabase(testDialect === 'postgres' ? { databaseUrl: process.env.TEST_DATABASE_URL, databaseSchema: side } : { sqliteFile: ':memory:' });
  try {
    const first = Object.fromEntries(Object.entries(migrations).slice(0, 3));
    const failing = {
      ...first,
      '9998-a-table': { up: (k: Parameters<(typeof migrations)[string]['up']>[0]) => k.schema.createTable('atomic_probe').addColumn('x', 'integer').execute() },
      '9999-broken': { up: () => Promise.reject(new Error('broken on purpose')) },
    };
    await assert.rejects(migrateToLatest(db, failing), /broken on purpose/);
    const tables = (await db.db.introspection.getTables({ withInternalKyselyTables: true })).map((t) => t.name);
    assert.ok(!tables.includes('atomic_probe'), `the run's migrations were rolled back (${tables.join(', ')})`);
    assert.ok(!tables.includes('users'), 'the first migrations of the run too');
    // The same run without the broken one applies them all.
    const ok = { ...first, '9998-a-table': failing['9998-a-table'] };
    const { results } = await migrateToLatest(db, ok);
    assert.equal(results?.length, 4);
  } finally {
    await db.destroy();
    if (side) await dropTestSchema(side);
  }
});
