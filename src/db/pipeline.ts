import { CompiledQuery, type Compilable, type DatabaseConnection, type Driver, type Kysely, type QueryResult, type TransactionSettings } from 'kysely';
import type * as Pg from 'pg';
import type { DB } from './schema.js';

/**
 * PostgreSQL through node-postgres, with the round trips a transaction does not need folded into
 * the ones it does. Each statement sent alone costs a round trip: the query written to the socket
 * (on loopback the kernel runs the backend's receive in the writer's time), the backend woken, its
 * answer read back, the event loop's turn. Two kinds of statement need no answer of their own:
 *
 * - the transaction's BEGIN: it travels with the transaction's first statement;
 * - a write whose answer the caller does not need (`withNext`: a counter's upsert, a queued
 *   delivery): it travels with the transaction's next statement, its COMMIT at the latest.
 *
 * Both go in the next statement's round trip as extended-protocol messages before it, under one
 * Sync (`Parse/Bind/Execute` each, then the statement's own): PostgreSQL runs them in the order
 * written, so the transaction sees exactly what it would have seen had each been sent alone, and
 * values stay bound parameters. A carried statement that fails fails that round trip: PostgreSQL
 * skips the rest up to the Sync, the error is answered as a `CarriedStatementError` naming the
 * statement (never with the next statement's own error code, so no caller mistakes a failed
 * counter for its own unique violation), and the transaction is rolled back as after any error.
 * A transaction rolled back before its carried writes were sent never sends them (nor its BEGIN).
 *
 * Outside a transaction, `withNext` changes nothing: the write is sent at once. On SQLite it is
 * ignored (one writer; nothing travels).
 */

const WITH_NEXT = Symbol('muster: sent with the next statement');

/**
 * Marks a write whose answer its caller does not need (it answers no rows, and nothing waits on
 * it): inside a PostgreSQL transaction it travels with the transaction's next statement (its
 * COMMIT at the latest); anywhere else it runs as usual. `db.executeQuery(withNext(q))` then
 * answers no rows at once.
 */
export function withNext<R>(query: CompiledQuery<R>): CompiledQuery<R> {
  // Its rows would have nowhere to go: a held statement's answer is dropped.
  if (ANSWERS_ROWS.test(query.sql)) throw new Error(`withNext is for writes that answer no rows: ${query.sql.slice(0, 80)}`);
  return Object.freeze({ ...query, [WITH_NEXT]: true });
}
const ANSWERS_ROWS = /^\s*(select|with|show|values)\b|\breturning\b/i;

/** Runs a write marked withNext (a query builder or a compiled statement) in `db`: see withNext. */
export async function writeWithNext(db: Kysely<DB>, query: Compilable<unknown> | CompiledQuery): Promise<void> {
  await db.executeQuery(withNext('compile' in query ? query.compile() : query));
}

/** Whether `query` was marked by withNext (the query log tells which statements travelled with the next). */
export function sentWithNext(query: CompiledQuery): boolean {
  return (query as { [WITH_NEXT]?: true })[WITH_NEXT] === true;
}

/** A statement carried by another's round trip failed: the round trip's statement did not run. */
export class CarriedStatementError extends Error {
  constructor(
    readonly statement: string,
    override readonly cause: unknown,
  ) {
    super(`a statement sent with the next one failed (${statement.slice(0, 80)}): ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'CarriedStatementError';
  }
}

// ---------------------------------------------------------------------------------------------------
// node-postgres's query, with statements written before it under its Sync.

/** What of node-postgres's connection a query writes through (pg/lib/connection.js). */
interface WireConnection {
  stream: { cork?: () => void; uncork?: () => void };
  parse(q: { text: string; name?: string; types?: unknown[] }): void;
  bind(c: { values: unknown[] }): void;
  execute(c: { portal?: string; rows?: number }): void;
}

/** node-postgres's Query, as its client drives it (pg/lib/query.js): the hooks a carrying query extends. */
interface QueryInternals {
  submit(connection: WireConnection): Error | null | undefined;
  handleCommandComplete(msg: unknown, connection: WireConnection): void;
  handleError(err: Error, connection: WireConnection): void;
}
type QueryBase = new (config: { text: string; values: unknown[]; queryMode: 'extended' }, values: undefined, callback: (err: Error | undefined, result: Pg.QueryResult) => void) => QueryInternals;

interface Carried {
  text: string;
  values: readonly unknown[];
}

type CarryingQuery = QueryInternals & { readonly done: Promise<Pg.QueryResult> };
type CarryingQueryClass = new (prefix: readonly Carried[], text: string, values: readonly unknown[]) => CarryingQuery;

/** Built once per node-postgres module (loaded lazily by database.ts). */
const carryingQueries = new WeakMap<typeof Pg, CarryingQueryClass>();

function carryingQueryOf(pg: typeof Pg): CarryingQueryClass {
  const known = carryingQueries.get(pg);
  if (known) return known;
  const prepareValue = (pg as unknown as { utils: { prepareValue: (v: unknown) => unknown } }).utils.prepareValue;
  class CarryingQueryImpl extends (pg.Query as unknown as QueryBase) {
    readonly done: Promise<Pg.QueryResult>;
    readonly #prefix: readonly Carried[];
    #completed = 0;

    constructor(prefix: readonly Carried[], text: string, values: readonly unknown[]) {
      let settle!: (err: Error | undefined, result: Pg.QueryResult) => void;
      const done = new Promise<Pg.QueryResult>((resolve, reject) => {
        settle = (err, result) => (err ? reject(err) : resolve(result));
      });
      // Extended protocol even without values: a simple Query message would end the round trip with a Sync of its own.
      super({ text, values: [...values], queryMode: 'extended' }, undefined, (err, result) => settle(err, result));
      this.done = done;
      this.#prefix = prefix;
    }

    override submit(connection: WireConnection): Error | null | undefined {
      let bound: unknown[][];
      try {
        // Mapped before anything is written, so a value that cannot be sent leaves the connection as it was.
        bound = this.#prefix.map((p) => p.values.map((v) => prepareValue(v)));
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
      connection.stream.cork?.();
      try {
        this.#prefix.forEach((p, i) => {
          connection.parse({ text: p.text, types: [] });
          connection.bind({ values: bound[i]! });
          connection.execute({});
        });
        return super.submit(connection);
      } finally {
        connection.stream.uncork?.();
      }
    }

    /** The carried statements complete first, in order; the query's own completion is the last. */
    override handleCommandComplete(msg: unknown, connection: WireConnection): void {
      if (this.#completed < this.#prefix.length) {
        this.#completed++;
        return;
      }
      super.handleCommandComplete(msg, connection);
    }

    override handleError(err: Error, connection: WireConnection): void {
      const carried = this.#completed < this.#prefix.length ? this.#prefix[this.#completed] : undefined;
      super.handleError(carried ? new CarriedStatementError(carried.text, err) : err, connection);
    }
  }
  carryingQueries.set(pg, CarryingQueryImpl);
  return CarryingQueryImpl;
}

// ---------------------------------------------------------------------------------------------------
// Kysely's connection and driver.

const BEGIN = withNext(CompiledQuery.raw('begin'));
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

class PipelinedConnection implements DatabaseConnection {
  /** Statements to send before the next one, in order (BEGIN first when the transaction has sent nothing yet). */
  pending: CompiledQuery[] = [];
  inTransaction = false;

  constructor(
    readonly client: Pg.PoolClient,
    readonly pg: typeof Pg,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction && sentWithNext(query)) {
      this.pending.push(query);
      return { rows: [] };
    }
    const result = this.pending.length === 0 ? await this.client.query(query.sql, [...query.parameters]) : await this.#carrying(query);
    const { command, rowCount, rows } = result;
    const changed = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
    return { ...(changed ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}), rows: (rows ?? []) as R[] };
  }

  #carrying(query: CompiledQuery): Promise<Pg.QueryResult> {
    const prefix = this.pending.map((q) => ({ text: q.sql, values: q.parameters }));
    this.pending = [];
    const q = new (carryingQueryOf(this.pg))(prefix, query.sql, query.parameters);
    void this.client.query(q as unknown as Pg.Submittable);
    return q.done;
  }

  /** Whether the transaction's BEGIN is still to be sent (nothing of it has reached the database). */
  get unsent(): boolean {
    return this.pending[0] === BEGIN;
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not configured on PostgreSQL');
  }
}

/**
 * Kysely's driver for node-postgres (as its PostgresDriver, without cursors, savepoints or
 * connection hooks, which Muster does not use), sending what `withNext` marks and each
 * transaction's BEGIN with the statement that follows them.
 */
export class PipeliningPostgresDriver implements Driver {
  readonly #connections = new WeakMap<Pg.PoolClient, PipelinedConnection>();
  #pool: Pg.Pool | undefined;

  constructor(pool: Pg.Pool, private readonly pg: typeof Pg) {
    this.#pool = pool;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.#pool) throw new Error('driver has already been destroyed');
    const client = await this.#pool.connect();
    let connection = this.#connections.get(client);
    if (!connection) this.#connections.set(client, (connection = new PipelinedConnection(client, this.pg)));
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as PipelinedConnection;
    if (settings.isolationLevel || settings.accessMode) {
      await c.executeQuery(CompiledQuery.raw(['start transaction', settings.isolationLevel && `isolation level ${settings.isolationLevel}`, settings.accessMode].filter(Boolean).join(' ')));
      c.inTransaction = true;
      return;
    }
    c.inTransaction = true;
    await c.executeQuery(BEGIN); // held: it travels with the transaction's first statement
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as PipelinedConnection;
    try {
      if (c.unsent && c.pending.length === 1) c.pending = []; // nothing was asked of the database: nothing to send
      else await c.executeQuery(COMMIT);
    } finally {
      c.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as PipelinedConnection;
    const unsent = c.unsent;
    c.pending = []; // what was held would be undone
    c.inTransaction = false;
    if (!unsent) await c.executeQuery(ROLLBACK);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as PipelinedConnection;
    c.pending = [];
    c.inTransaction = false;
    c.client.release();
  }

  async destroy(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool) await pool.end();
  }
}
