import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { dropTestSchema, testDialect, testSchemaName } from '../../test/helpers.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

// PostgreSQL only (a session setting of the server): node-postgres reads PGOPTIONS only when no
// `options` is given, and the schema's search_path is one; both must reach the session.
if (testDialect === 'postgres') {
  test('PGOPTIONS reaches every session beside the schema search_path', async () => {
    const schema = testSchemaName('po');
    const before = process.env.PGOPTIONS;
    process.env.PGOPTIONS = '-c statement_timeout=4321';
    const database = openDatabase({ databaseUrl: process.env.TEST_DATABASE_URL, databaseSchema: schema });
    try {
      const { rows } = await sql<{ timeout: string; path: string }>`select current_setting('statement_timeout') as timeout, current_setting('search_path') as path`.execute(database.db);
      assert.deepEqual(rows[0], { timeout: '4321ms', path: schema });
    } finally {
      if (before === undefined) delete process.env.PGOPTIONS;
      else process.env.PGOPTIONS = before;
      await database.destroy();
      await dropTestSchema(schema);
    }
  });
}

// The migrator asks the introspector whether its bookkeeping tables exist on every start. Kysely's own
// lists every table of every schema: slow on a database shared by many schemas, and failing when one
// of them is dropped mid-listing. Ours sees the instance's schema only (src/db/pg-introspector.ts).
if (testDialect === 'postgres') {
  test("introspection lists the instance's own schema only, and a migration runs while another schema is dropped", async () => {
    const ours = testSchemaName('pi');
    const other = testSchemaName('pi');
    const url = process.env.TEST_DATABASE_URL;
    const a = openDatabase({ databaseUrl: url, databaseSchema: ours });
    const b = openDatabase({ databaseUrl: url, databaseSchema: other });
    try {
      await migrateToLatest(a);
      await sql`create schema ${sql.id(other)}`.execute(b.db);
      await sql`create table ${sql.id(other)}.elsewhere (x int)`.execute(b.db);
      const tables = await a.db.introspection.getTables({ withInternalKyselyTables: true });
      assert.ok(tables.length > 40, `${tables.length} tables`);
      assert.deepEqual(new Set(tables.map((t) => t.schema)), new Set([ours]));
      assert.ok(tables.some((t) => t.name === 'kysely_migration'));
      assert.ok(!(await a.db.introspection.getTables()).some((t) => t.name === 'kysely_migration'), 'bookkeeping tables only when asked for');
      const incidents = tables.find((t) => t.name === 'incidents')!;
      assert.ok(incidents.columns.some((c) => c.name === 'id' && !c.isNullable));
      // Another schema comes and goes many times while ours migrates (a no-op run: it still looks its tables up).
      let churn = true;
      const dropper = (async () => {
        for (let i = 0; churn && i < 200; i += 1) {
          await sql`drop schema if exists ${sql.id(other)} cascade`.execute(b.db);
          await sql`create schema ${sql.id(other)}`.execute(b.db);
          await sql`create table ${sql.id(other)}.elsewhere (x int)`.execute(b.db);
        }
      })();
      for (let i = 0; i < 5; i += 1) await migrateToLatest(a);
      churn = false;
      await dropper;
    } finally {
      await a.destroy();
      await b.destroy();
      await dropTestSchema(ours);
      await dropTestSchema(other);
    }
  });
}
