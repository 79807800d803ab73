// Kysely's PostgreSQL introspector lists every column of every table of every schema the role can
// use (with a function call per column), and its migrator asks it three times per start just to learn
// whether its own two bookkeeping tables exist. On a database shared by many schemas (the test suite
// gives each test file its own, hundreds at a time; a host may run several instances side by side)
// that listing grew with every schema: a server start on PostgreSQL took 16 s with ~120 schemas
// present, and a schema dropped by someone else mid-listing failed the start ("schema ... does not
// exist"). This introspector lists the tables of one schema only: ours (DATABASE_SCHEMA), or the
// session's current_schema() (public by default).
import type * as Pg from 'pg';
import { PipeliningPostgresDriver } from './pipeline.js';
import { PostgresDialect, sql, type DatabaseIntrospector, type Driver, type DatabaseMetadataOptions, type Kysely, type SchemaMetadata, type TableMetadata } from 'kysely';

interface ColumnRow {
  table: string;
  kind: string;
  column: string;
  type: string;
  not_null: boolean;
  has_default: boolean;
}

export class SchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly schema: string | undefined,
  ) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows.map((r) => ({ name: r.name }));
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const schema = this.schema === undefined ? sql`current_schema()` : sql`${this.schema}`;
    const { rows } = await sql<ColumnRow & { schema: string }>`
      select c.relname as "table", c.relkind as kind, ns.nspname as "schema", a.attname as "column",
             t.typname as type, a.attnotnull as not_null, a.atthasdef as has_default
        from pg_catalog.pg_class c
        join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
        join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
        join pg_catalog.pg_type t on t.oid = a.atttypid
       where ns.nspname = ${schema} and c.relkind in ('r', 'v', 'p')
       order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const r of rows) {
      if (!options.withInternalKyselyTables && (r.table === 'kysely_migration' || r.table === 'kysely_migration_lock')) continue;
      let table = tables.get(r.table);
      if (!table) {
        table = { name: r.table, schema: r.schema, isView: r.kind === 'v', columns: [] };
        tables.set(r.table, table);
      }
      table.columns.push({
        name: r.column,
        dataType: r.type,
        isNullable: !r.not_null,
        hasDefaultValue: r.has_default,
        // Serial columns are not used here (identity columns are); the migrator never reads this.
        isAutoIncrementing: false,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions) {
    return { tables: await this.getTables(options) };
  }
}

/** PostgreSQL through node-postgres, introspecting one schema only; the driver folds round trips a transaction does not need (pipeline.ts). */
export class SchemaPostgresDialect extends PostgresDialect {
  constructor(
    private readonly pool: Pg.Pool,
    private readonly pg: typeof Pg,
    private readonly schema: string | undefined,
  ) {
    super({ pool });
  }

  /** Sends each transaction's BEGIN, and the writes marked withNext, with the statement that follows them (pipeline.ts). */
  override createDriver(): Driver {
    return new PipeliningPostgresDriver(this.pool, this.pg);
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SchemaIntrospector(db, this.schema);
  }
}
