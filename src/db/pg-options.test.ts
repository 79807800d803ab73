import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { dropTestSchema, testDialect, testSchemaName } from '../../test/helpers.js';
import { openDatabase } from './database.js';

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
