import fs from 'node:fs';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { Kysely, sql, type CompiledQuery, type KyselyConfig } from 'kysely';
import type * as Pg from 'pg';
import { lazyRequire } from '../lib/lazy-require.js';
import { SchemaPostgresDialect } from './pg-introspector.js';
import { sentWithNext } from './pipeline.js';
import type { DB } from './schema.js';
import { SqliteLongReader } from './long-read.js';
import { ImmediateSqliteDialect } from './sqlite-dialect.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: DialectName;
  /** The PostgreSQL schema in use when one is configured. */
  schema?: string | undefined;
  /** Answers when the database can run a query (readiness). */
  ping(): Promise<void>;
  destroy(): Promise<void>;
  /** PostgreSQL: the pool's connections (metrics); absent on SQLite. */
  poolStats?(): { total: number; idle: number; waiting: number };
  /**
   * Runs a read that may take seconds (a report over a year) without holding the event loop: on
   * SQLite in a worker thread on a read-only connection (long-read.ts; on the server's own connection
   * for `:memory:`), on PostgreSQL on the pool like any query; read-only on both.
   */
  longRead<R>(query: CompiledQuery<R>): Promise<R[]>;
}

export type OnQuery = (sql: string, parameters: readonly unknown[], durationMs: number, withNext: boolean) => void;

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
  /** SQLite file; `:memory:` for a private in-memory database. */
  sqliteFile?: string;
  poolSize?: number;
  /**
   * Called with the SQL of every query, its bound parameters and its duration in ms (diagnostics, tests,
   * bench/write-limit.bench.ts), in the order the statements run; `withNext` when, on PostgreSQL, the statement
   * travelled in the round trip of the one after it (pipeline.ts: a transaction's BEGIN, the writes marked withNext).
   */
  onQuery?: OnQuery;
}

// Each engine's driver loads when a database of that engine opens, not at every start: pg only with
// DATABASE_URL, better-sqlite3 only without (lib/lazy-require.ts).
const sqliteDriver = lazyRequire<typeof SQLite>('better-sqlite3');
const requirePg = lazyRequire<typeof Pg>('pg');
let pgReady: typeof Pg | undefined;
function pgDriver(): typeof Pg {
  if (pgReady) return pgReady;
  const pg = requirePg();
  // COUNT(*) and BIGINT ids come back from pg as strings; every id and count here fits in 2^53.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
  pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number.parseFloat(v));
  return (pgReady = pg);
}

export function openDatabase(options: DatabaseOptions): Database {
  const onQuery = options.onQuery;
  // Only PostgreSQL's driver sends a statement with the next one (pipeline.ts); SQLite runs each at once.
  const log = (pipelined: boolean): KyselyConfig['log'] =>
    onQuery
      ? (e) => {
          if (e.level === 'query') onQuery(e.query.sql, e.query.parameters, e.queryDurationMillis, pipelined && sentWithNext(e.query));
        }
      : undefined;
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.databaseSchema, options.poolSize ?? 10, log(true));
  if (!options.sqliteFile) throw new Error('openDatabase needs databaseUrl or sqliteFile');
  return openSqlite(options.sqliteFile, log(false));
}

function openSqlite(file: string, log: KyselyConfig['log']): Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const Driver = sqliteDriver();
  const sqlite = new Driver(file);
  sqlite.pragma('journal_mode = WAL');
  // FULL: NORMAL may lose acknowledged commits on power loss in WAL mode.
  sqlite.pragma('synchronous = FULL');
  // Statement journals in memory, never in temp files: each member of a group of commits runs in a
  // SAVEPOINT, and SQLite keeps the old copy of every page a savepoint changes in a statement journal
  // that spills to a new temp file past 64 KiB, which a creation (about 20 pages) passes: a file
  // created, written page by page and unlinked per member. MEMORY also holds temp tables and sorts
  // no index serves in memory; the incident list's queries walk indexes and stop at their limit
  // (docs/performance.md, "Statement journals in memory"; docs/operations.md, "SQLite settings").
  sqlite.pragma('temp_store = MEMORY');
  sqlite.pragma('foreign_keys = ON');
  // Another process holding the write lock (a migration, a second CLI) makes us wait, not fail.
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }), ...(log ? { log } : {}) });
  const reader = file === ':memory:' ? undefined : new SqliteLongReader(file);
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    destroy: async () => {
      await reader?.close();
      await db.destroy();
    },
    longRead: async <R>(query: CompiledQuery<R>) => (reader ? reader.read(query) : (await db.executeQuery(query)).rows),
  };
}

/**
 * A query whose SQL starts with this comment answers its rows as arrays of column values, in the
 * order of its select list (better-sqlite3's raw mode), on SQLite: building a JavaScript object per
 * row with named properties costs better-sqlite3 more than reading the row (about 60 % of a 50-row
 * page of incidents; docs/benchmarks.md). PostgreSQL ignores the comment and answers objects, so a
 * caller maps either shape (incidents.repository.ts, listIncidents). The query still runs through
 * Kysely, on its one connection, so it never reads inside an open group of commits.
 */
export const ROWS_AS_ARRAYS = '/* rows as arrays */ ';

/**
 * Kysely prepares every query anew; better-sqlite3 statements are reusable, and preparing costs
 * more than running a small indexed query. Kysely's driver runs one query at a time on the
 * connection, so sharing a cached statement is safe. The cache is bounded (queries are built
 * from a fixed set of shapes; values are bound parameters).
 */
function withStatementCache(sqlite: SQLite.Database, max = 500) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare: (sql: string) => {
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = sqlite.prepare(sql);
        if (stmt.reader && sql.startsWith(ROWS_AS_ARRAYS)) stmt.raw(true);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

function openPostgres(connectionString: string, schema: string | undefined, max: number, log: KyselyConfig['log']): Database {
  const pool = new (pgDriver().Pool)({
    connectionString,
    max,
    // The schema's search_path joins PGOPTIONS (libpq's variable for session settings, which node-postgres
    // reads only when no `options` is given) instead of hiding it.
    ...(schema ? { options: [process.env.PGOPTIONS, `-c search_path=${schema}`].filter(Boolean).join(' ') } : {}),
  });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const db = new Kysely<DB>({ dialect: new SchemaPostgresDialect(pool, pgDriver(), schema), ...(log ? { log } : {}) });
  return {
    db,
    dialect: 'postgres',
    schema,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    destroy: () => db.destroy(),
    // In a read-only transaction, as SQLite's read-only connection: a long read never writes.
    longRead: <R>(query: CompiledQuery<R>) =>
      db.transaction().execute(async (trx) => {
        await sql`set transaction read only`.execute(trx);
        return (await trx.executeQuery(query)).rows;
      }),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
