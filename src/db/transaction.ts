import type { Kysely, Transaction } from 'kysely';
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
