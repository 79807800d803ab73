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
  const result = await db.transaction().execute((trx) => fn({ db: trx, onCommit: (hook) => hooks.push(hook) }));
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
