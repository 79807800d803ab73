import { Migrator, sql, type ColumnDefinitionBuilder, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
import type { Database, DialectName } from './database.js';
import { migrations } from './migrations/index.js';

/** What a migration may branch on: only the column types and identity syntax differ between engines. */
export interface MigrationDialect {
  name: DialectName;
  idType: 'integer' | 'bigint';
  identity(col: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
}

export interface MigrationModule {
  up(db: Kysely<unknown>, d: MigrationDialect): Promise<void>;
  down?(db: Kysely<unknown>, d: MigrationDialect): Promise<void>;
}

export function migrationDialect(name: DialectName): MigrationDialect {
  return name === 'sqlite'
    ? { name, idType: 'integer', identity: (c) => c.primaryKey().autoIncrement() }
    : { name, idType: 'bigint', identity: (c) => c.primaryKey().generatedByDefaultAsIdentity() };
}

/** Brings the schema up to date; safe to run from several processes at once (Kysely holds a migration lock). */
export async function migrateToLatest(database: Database, list: Record<string, MigrationModule> = migrations): Promise<MigrationResultSet> {
  const d = migrationDialect(database.dialect);
  const provider = {
    getMigrations: () =>
      Promise.resolve(
        Object.fromEntries(
          Object.entries(list).map(([name, m]): [string, Migration] => [
            name,
            {
              up: (db) => m.up(db, d),
              ...(m.down ? { down: (db: Kysely<unknown>) => m.down!(db, d) } : {}),
            },
          ]),
        ),
      ),
  };
  if (database.schema) await sql`create schema if not exists ${sql.id(database.schema)}`.execute(database.db);
  // Kysely looks for its bookkeeping tables in every schema; pin them to ours so schemas sharing a database stay apart.
  const result = await new Migrator({
    db: database.db,
    provider,
    // Numbers are reserved per piece of work and land in any order (0010 and 0015 came after 0016): a
    // database upgraded from a release that ran 0016 must still run them, so order is not enforced.
    allowUnorderedMigrations: true,
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
  }).migrateToLatest();
  if (result.error) throw result.error instanceof Error ? result.error : new Error(`migration failed: ${JSON.stringify(result.error)}`);
  return result;
}
