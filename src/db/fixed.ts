import { CompiledQuery, SqliteAdapter, type Compilable, type Kysely, type QueryResult } from 'kysely';
import { withNext } from './pipeline.js';
import type { DB } from './schema.js';

/**
 * Statements of a fixed shape, compiled once per database instead of built and compiled by Kysely
 * on every call (issue #19: building and compiling was 10-15 % of an incident creation's CPU, each
 * builder step copying its node). A shape is built once with a marker in place of each value;
 * compiling it tells which value goes to which parameter, and each call binds its own values in
 * that order to the SQL compiled then. The SQL is the same text Kysely would build per call (the
 * better-sqlite3 statement cache of database.ts reuses its prepared statement), values are still
 * bound parameters, and the query runs through Kysely (its connection, its log).
 *
 * This file is the one compile-once mechanism (`compiledOnce`): `FixedQuery` (a statement of one
 * shape), `insertRows` (the creation path's inserts) and the incident list's statements (one shape
 * per set of filters) all keep their compiled SQL here, per adapter, so two dialects (or two
 * databases of different dialects in one process) never share a compiled statement.
 */

const MARKER = '\u0000muster-param:';

/**
 * Where a parameter's value is read: `key` of the values (a name, or an index of an array of
 * values), or `row.name` for a row of an array of rows.
 */
type Path = readonly [string | number] | readonly [number, string];

/** A compiled statement's SQL and, per parameter, where its value is read (a path) or the value itself (a constant of the shape). */
interface Shape {
  sql: string;
  params: readonly ({ path: Path } | { value: unknown })[];
}

/** The markers a shape is built with: `mark('title')`, `mark(2)` for the third of an array of values, `mark(0, 'title')` for row 0 of several. */
export type Mark = (...path: [string | number] | [number, string]) => never;

const mark: Mark = (...path) => (MARKER + path.join('.')) as never;

function compileShape(compiled: CompiledQuery, constants: boolean): Shape {
  const params = compiled.parameters.map((p) => {
    if (typeof p !== 'string' || !p.startsWith(MARKER)) {
      if (constants) return { value: p };
      throw new Error(`A fixed statement binds only marked values: ${compiled.sql}`);
    }
    const parts = p.slice(MARKER.length).split('.');
    return { path: (parts.length === 1 ? [parts[0]!] : [Number(parts[0]), parts[1]!]) as Path };
  });
  return { sql: compiled.sql, params };
}

/** The dialect's compiler is what makes the SQL: shapes are kept per adapter (a Kysely and its transactions share one). */
function adapterOf(db: Kysely<DB>): object {
  return db.getExecutor().adapter;
}

/** Whether `db` (the app's Kysely or a transaction of it) runs on SQLite. */
export function onSqlite(db: Kysely<DB>): boolean {
  return adapterOf(db) instanceof SqliteAdapter;
}

function bind(shape: Shape, values: unknown): CompiledQuery {
  const params = new Array<unknown>(shape.params.length);
  for (let i = 0; i < params.length; i++) {
    const p = shape.params[i]!;
    if (!('path' in p)) {
      params[i] = p.value;
      continue;
    }
    const path = p.path;
    params[i] = path.length === 1 ? (values as Record<string | number, unknown>)[path[0]] : (values as Record<string, unknown>[])[path[0]]![path[1]];
  }
  return CompiledQuery.raw(shape.sql, params);
}

/** Compiled shapes per adapter, then per key; a key names one shape of one statement. */
const shapesByAdapter = new WeakMap<object, Map<unknown, Shape>>();
/** Keys per adapter kept at most (list shapes grow with the number of orgs a scope has); the oldest is dropped. */
const MAX_SHAPES = 1000;

export interface CompileOptions {
  /** Values the build writes itself (not marked) are constants of the shape, kept as compiled. Off: every value must be marked. */
  constants?: boolean;
}

/**
 * The one compile-once mechanism: the statement `build` makes (with `mark` in place of each value
 * that varies), compiled once per adapter and `key`, bound to `values` along the marks. `key` must
 * tell apart every statement `build` can make for one adapter (the dialect is already told apart:
 * shapes are kept per adapter). `build` may answer a query builder or a compiled query (for a
 * statement with a prefix or a suffix of its own).
 */
export function compiledOnce(db: Kysely<DB>, key: unknown, build: (mark: Mark) => Compilable<unknown> | CompiledQuery, values: unknown, options: CompileOptions = {}): CompiledQuery {
  const adapter = adapterOf(db);
  let shapes = shapesByAdapter.get(adapter);
  if (!shapes) shapesByAdapter.set(adapter, (shapes = new Map<unknown, Shape>()));
  let shape = shapes.get(key);
  if (!shape) {
    const built = build(mark);
    shape = compileShape('compile' in built ? built.compile() : built, options.constants === true);
    if (shapes.size >= MAX_SHAPES) shapes.delete(shapes.keys().next().value);
    shapes.set(key, shape);
  }
  return bind(shape, values);
}

/** A statement built once (with `mark` for its values) and run with `values` read along the marks. */
export class FixedQuery<V> {
  readonly #build: (db: Kysely<DB>, mark: Mark) => Compilable<unknown>;

  constructor(build: (db: Kysely<DB>, mark: Mark) => Compilable<unknown>) {
    this.#build = build;
  }

  /** The statement bound to `values`. */
  compile(db: Kysely<DB>, values: V): CompiledQuery {
    return compiledOnce(db, this, (m) => this.#build(db, m), values);
  }

  execute<R>(db: Kysely<DB>, values: V): Promise<QueryResult<R>> {
    return db.executeQuery<R>(this.compile(db, values));
  }
}

/**
 * What the insert answers: its rows, their ids, nothing, or nothing and not even when it is done
 * (`later`: inside a PostgreSQL transaction it travels with the transaction's next statement,
 * pipeline.ts `withNext`; anywhere else it is `none`).
 */
type Returning = 'all' | 'id' | 'none' | 'later';
/** Inserts of more rows are built by Kysely each time (a shape per row count would grow without bound). */
const MAX_ROWS = 8;

/** A value Kysely binds as it is (anything else, such as an expression, goes through Kysely's builder). */
const plain = (v: unknown) => v === null || typeof v !== 'object' || v instanceof Date;

/**
 * `insert into <table> (<the rows' columns>) values (...), ... [returning * | returning id]`,
 * compiled once per table, returning, row count and column list: the statement
 * `db.insertInto(table).values(rows)` with that returning would be, bound to these rows.
 * Columns whose value is undefined are left out as Kysely leaves them out. Rows of different
 * columns, with values that are expressions, or more than MAX_ROWS rows are built by Kysely each time.
 */
export function insertRows<R>(db: Kysely<DB>, table: keyof DB, objects: readonly object[], returning: Returning, conflict?: Conflict): Promise<QueryResult<R>> {
  const rows = objects as readonly Record<string, unknown>[];
  const first = rows[0];
  if (first === undefined) throw new Error('insertRows needs a row');
  if (rows.length > MAX_ROWS) return viaKysely(db, table, rows, returning, conflict);
  let columns = '';
  let count = 0;
  for (const key in first) {
    const v = first[key];
    if (v === undefined) continue;
    if (!plain(v)) return viaKysely(db, table, rows, returning, conflict);
    columns += `${key},`;
    count++;
  }
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r]!;
    let n = 0;
    for (const key in row) {
      const v = row[key];
      if (v === undefined) continue;
      if (!plain(v) || first[key] === undefined) return viaKysely(db, table, rows, returning, conflict);
      n++;
    }
    if (n !== count) return viaKysely(db, table, rows, returning, conflict);
  }
  const adapter = adapterOf(db);
  // One row's id on SQLite: from the insert's own result, without RETURNING (see insertedId).
  const idAfter = returning === 'id' && rows.length === 1 && adapter instanceof SqliteAdapter;
  const written = idAfter || returning === 'later' ? 'none' : returning;
  const names = columns.slice(0, -1).split(',');
  const query = compiledOnce(
    db,
    `insert|${table}|${written}|${rows.length}|${conflict?.name ?? ''}|${columns}`,
    (m) => returningOf(withConflict(db.insertInto(table).values(rows.map((_, r) => Object.fromEntries(names.map((c) => [c, m(r, c)])))), conflict), written),
    rows,
  );
  if (idAfter) return db.executeQuery(query).then((r) => (conflict && r.numAffectedRows === 0n ? { rows: [] } : insertedId<R>(table, r.insertId)));
  return db.executeQuery<R>(returning === 'later' ? withNext(query) : query);
}

type InsertBuilder = ReturnType<Kysely<DB>['insertInto']>;
/**
 * An `on conflict` clause of an insert (`build` adds it to the builder), with the `name` that tells
 * its compiled shape apart. The clause's own values must be constants of the SQL (no parameters).
 * With `returning: 'id'`, a row the conflict skipped answers no row (on SQLite: the statement
 * changed nothing, so its rowid is not the row's).
 */
export interface Conflict {
  name: string;
  build: (q: InsertBuilder) => InsertBuilder;
}

const withConflict = (q: InsertBuilder, conflict: Conflict | undefined) => (conflict ? conflict.build(q) : q);

/**
 * What `returning id` answers for one row inserted on SQLite, without the clause: SQLite runs
 * RETURNING like a trigger, so the statement keeps a statement journal (a copy of every page it
 * changes; docs/performance.md, "Statement journals in memory") and buffers its rows. On the
 * incident insert at 300,000 rows, with the journal in memory as database.ts keeps it
 * (`npx tsx bench/returning-cost.ts --memory`, CPU): 21-25 us with `returning *`, 15-20 with
 * `returning id`, 9-11 without. The id is the insert's rowid, which better-sqlite3 answers with the
 * statement's result (every table's id is its INTEGER PRIMARY KEY).
 */
function insertedId<R>(table: keyof DB, insertId: bigint | undefined): QueryResult<R> {
  if (insertId === undefined) throw new Error(`insert into ${table} answered no rowid`);
  return { rows: [{ id: Number(insertId) } as R] };
}

function returningOf(q: InsertBuilder, returning: Returning): Compilable<unknown> {
  if (returning === 'all') return q.returningAll();
  if (returning === 'id') return q.returning('id' as never);
  return q;
}

function viaKysely<R>(db: Kysely<DB>, table: keyof DB, rows: readonly Record<string, unknown>[], returning: Returning, conflict?: Conflict): Promise<QueryResult<R>> {
  const query = returningOf(withConflict(db.insertInto(table).values(rows), conflict), returning).compile();
  return db.executeQuery<R>(returning === 'later' ? withNext(query) : query);
}
