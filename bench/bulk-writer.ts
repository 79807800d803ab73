// Seeding a database fast for a benchmark (bench/reports.bench.ts, bench/cold-start.bench.ts): rows
// written straight into Muster's migrated schema, not through the API (a million incidents would take
// hours). SQLite: a second better-sqlite3 connection, one transaction, no fsync per page. PostgreSQL:
// one client inserting arrays through unnest(), with triggers and foreign-key checks off (the rows are
// made consistent by the caller), one transaction.
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import pg from 'pg';

export interface Column {
  name: string;
  /** The column's PostgreSQL array element type, for unnest(). */
  pg: 'bigint' | 'int' | 'text' | 'float8';
}
export const col = (name: string, type: Column['pg'] = 'text'): Column => ({ name, pg: type });

export interface BulkWriter {
  /** One statement in the seed's transaction (`$1`-style parameters on both engines). */
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  insert(table: string, columns: Column[], rows: unknown[][]): Promise<void>;
  /** Commits, rebuilds the statistics and flushes, so nothing of the seed is left for a measured run. */
  finish(): Promise<{ analyzeMs: number }>;
  close(): Promise<void>;
}

export function sqliteBulkWriter(file: string): BulkWriter {
  const db = new SQLite(file);
  db.pragma('busy_timeout = 5000');
  // This connection only seeds: no fsync per page, and a cache for the indexes of a million rows.
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -524288'); // 512 MiB
  const statements = new Map<string, SQLite.Statement>();
  db.exec('begin');
  return {
    query: async <T>(sql: string, params: unknown[] = []) => {
      const st = db.prepare(sql.replace(/\$\d+/g, '?'));
      if (st.reader) return st.all(...params) as T[];
      st.run(...params);
      return [];
    },
    insert: async (table, columns, rows) => {
      const key = `${table}(${columns.map((c) => c.name).join()})`;
      let st = statements.get(key);
      if (!st) {
        st = db.prepare(`insert into ${table} (${columns.map((c) => c.name).join(', ')}) values (${columns.map(() => '?').join(', ')})`);
        statements.set(key, st);
      }
      for (const r of rows) st.run(...r);
    },
    finish: async () => {
      db.exec('commit');
      const t = performance.now();
      db.exec('ANALYZE');
      const analyzeMs = performance.now() - t;
      db.pragma('wal_checkpoint(TRUNCATE)');
      const fd = fs.openSync(file, 'r+');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return { analyzeMs };
    },
    close: async () => {
      if (db.inTransaction) db.exec('rollback');
      db.close();
    },
  };
}

/** `analyze`: the tables the seed wrote, vacuumed and analysed at `finish` (a bare ANALYZE would visit every schema of the shared database). */
export async function pgBulkWriter(url: string, schema: string, analyze: readonly string[]): Promise<BulkWriter> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`set search_path to ${schema}`);
  // No triggers (the list version's trigger would bump one row a million times in one transaction;
  // callers set it once) and no foreign-key checks: the rows are made consistent.
  await client.query('set session_replication_role = replica');
  await client.query('begin');
  return {
    query: async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[],
    insert: async (table, columns, rows) => {
      const arrays = columns.map((_, i) => rows.map((r) => r[i] ?? null));
      const unnest = columns.map((c, i) => `$${i + 1}::${c.pg}[]`).join(', ');
      await client.query(`insert into ${table} (${columns.map((c) => c.name).join(', ')}) select * from unnest(${unnest})`, arrays);
    },
    finish: async () => {
      await client.query('commit');
      const t = performance.now();
      // VACUUM also sets the visibility maps as autovacuum would have by now (index-only scans need them).
      await client.query(`vacuum (analyze) ${analyze.join(', ')}`);
      return { analyzeMs: performance.now() - t };
    },
    close: async () => {
      await client.end();
    },
  };
}

/** Drops a benchmark's PostgreSQL schemas (each made for one run), with everything in them. */
export async function dropPgSchemas(url: string, schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const c = new pg.Client({ connectionString: url });
  try {
    await c.connect();
    for (const s of schemas) await c.query(`drop schema if exists ${s} cascade`);
  } finally {
    await c.end().catch(() => undefined);
  }
}
