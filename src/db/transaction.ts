import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';
import { GroupCommitter } from './group-commit.js';
import type { DB } from './schema.js';

type Hook = () => void | Promise<void>;

/** A transaction plus the side effects that may only happen once it has committed (stream events, wake-ups). */
export interface Tx {
  db: Transaction<DB>;
  onCommit(hook: Hook): void;
}

export type HookErrorHandler = (err: unknown) => void;

/** Per open transaction of withTransaction (PostgreSQL), the work to run as its last statements. */
const lastWork = new WeakMap<object, Hook[]>();

/**
 * Runs `work` as the last statements of the transaction `db` is, just before its COMMIT, when `db`
 * is one of withTransaction's (PostgreSQL): answers true then. Otherwise (SQLite's grouped commits,
 * or no transaction) it does nothing and answers false, and the caller writes at once.
 *
 * For writes of a row every transaction of an org writes (a counter): PostgreSQL holds that row's
 * lock from the statement to the COMMIT, so written first it is held across every later round trip
 * of the transaction (and the event loop's turns between them), and concurrent transactions of the
 * org queue behind it; written last it is held for the commit alone. On SQLite the one writer
 * holds every row anyway.
 */
export function beforeCommit(db: Kysely<DB>, work: Hook): boolean {
  const last = lastWork.get(db);
  if (!last) return false;
  last.push(work);
  return true;
}

/**
 * Runs `fn` in one transaction. Hooks registered with `tx.onCommit` run after the commit, in order;
 * a failing hook is reported and never undoes or fails the operation. On rollback they never run.
 */
export async function withTransaction<T>(
  db: Kysely<DB>,
  fn: (tx: Tx) => Promise<T>,
  onHookError: HookErrorHandler,
): Promise<T> {
  const hooks: Hook[] = [];
  const result = await db.transaction().execute(async (trx) => {
    const last: Hook[] = [];
    lastWork.set(trx, last);
    const r = await fn({ db: trx, onCommit: (hook) => hooks.push(hook) });
    for (let i = 0; i < last.length; i++) await last[i]!();
    lastWork.delete(trx);
    return r;
  });
  for (const hook of hooks) {
    try {
      await hook();
    } catch (err) {
      onHookError(err);
    }
  }
  return result;
}

export interface TransactionRunner {
  run<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Resolves once no transaction is queued or open (call before closing the database). */
  drain(): Promise<void>;
}

/**
 * How ctx.transaction runs: grouped commits on SQLite (group-commit.ts: one fsync for the
 * transactions that arrive together), one pooled transaction each on PostgreSQL, which commits
 * concurrent transactions on separate connections and groups their WAL flushes itself.
 */
export function transactionRunner(
  database: Database,
  onHookError: HookErrorHandler,
  options: { maxGroup?: number; onGroup?: (size: number) => void } = {},
): TransactionRunner {
  if (database.dialect === 'sqlite') {
    const group = new GroupCommitter(database.db, { onHookError, ...options });
    return { run: (fn) => group.run(fn), drain: () => group.drain() };
  }
  return { run: (fn) => withTransaction(database.db, fn, onHookError), drain: async () => undefined };
}
