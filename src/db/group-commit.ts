import { CompiledQuery, type ControlledTransaction, type Kysely } from 'kysely';
import type { DB } from './schema.js';
import type { HookErrorHandler, Tx } from './transaction.js';

type Hook = () => void | Promise<void>;

interface Member {
  fn: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  hooks: Hook[];
  result?: unknown;
  /** Its own failure (its savepoint rolled back), settled once the group is over. */
  error?: unknown;
}

export interface GroupCommitOptions {
  /** At most this many transactions share one COMMIT (bounds a group's latency and its rollback). */
  maxGroup?: number;
  onHookError: HookErrorHandler;
  /** Sees each group's size once it committed (tests, diagnostics). */
  onGroup?: (size: number) => void;
}

/** Thrown to a member whose own work was fine when its group as a whole could not commit. */
export class GroupCommitError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'GroupCommitError';
  }
}

// Compiled once: two of them run for each member of a group.
const SAVEPOINT = CompiledQuery.raw('savepoint muster_member');
const ROLLBACK_TO = CompiledQuery.raw('rollback to muster_member');
const RELEASE = CompiledQuery.raw('release muster_member');

/**
 * Grouped commits on SQLite (docs/performance.md, "Grouped commits"). A transaction asked for is
 * queued; at the next check phase of the event loop (setImmediate: after the I/O poll phase, so the
 * requests read in this loop turn have all queued theirs) one SQLite transaction opens (BEGIN
 * IMMEDIATE), runs the queued transactions one after another, each inside a SAVEPOINT (a failing one
 * is rolled back to it and only its caller gets the error), and COMMITs once: one fsync with
 * `synchronous = FULL` for the whole group. Only then does each caller's promise settle, after its
 * onCommit hooks ran, so an answered write is on disk. The group holds Kysely's single SQLite
 * connection from BEGIN to COMMIT, so no other query (a read outside any transaction) runs while it
 * is open or sees its uncommitted rows.
 */
export class GroupCommitter {
  readonly #db: Kysely<DB>;
  readonly #max: number;
  readonly #onHookError: HookErrorHandler;
  readonly #onGroup: ((size: number) => void) | undefined;
  readonly #queue: Member[] = [];
  /**
   * The member whose body (`fn`) runs, while the run of microtasks it started in lasts: see run().
   * No AsyncLocalStorage: on Node 20 one turns promise hooks on for the whole process (issue #19).
   */
  #body: Member | undefined;
  #scheduled = false;
  #running = false;
  #idle: (() => void)[] = [];

  constructor(db: Kysely<DB>, options: GroupCommitOptions) {
    this.#db = db;
    this.#max = options.maxGroup ?? 64;
    this.#onHookError = options.onHookError;
    this.#onGroup = options.onGroup;
  }

  /**
   * A transaction asked for while a body runs is that body's own (nested) one: on SQLite the group runs
   * its members one after another from one macrotask, and a body that waits only on the database
   * (better-sqlite3 answers at once) runs to its end in that macrotask's microtasks, which no other
   * request's code joins: the only callers settled meanwhile are the group's failed members, and
   * their errors wait for the end of the group. Once the microtask queue drains while a body is
   * still pending (it waits on a timer or I/O), other requests run: from then on the guard stands
   * down (#runBody), so their transactions queue as usual; a nested call after such a wait is not
   * caught (it would wait for its own group).
   */
  run<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.#body !== undefined) {
      // On one connection the nested transaction would wait for the group its caller holds: forever.
      return Promise.reject(new Error('ctx.transaction() called inside a transaction: pass the caller\'s tx instead'));
    }
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fn, resolve: resolve as (v: unknown) => void, reject, hooks: [] });
      this.#schedule();
    });
  }

  /** Resolves once no group is queued or open (before the database closes). */
  async drain(): Promise<void> {
    while (this.#running || this.#scheduled || this.#queue.length > 0) {
      await new Promise<void>((resolve) => this.#idle.push(resolve));
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#running) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#runGroup();
    });
  }

  async #runGroup(): Promise<void> {
    this.#running = true;
    const group = this.#queue.splice(0, this.#max);
    try {
      await this.#commitGroup(group);
    } finally {
      this.#running = false;
      if (this.#queue.length > 0) this.#schedule();
      else for (const wake of this.#idle.splice(0)) wake();
    }
  }

  async #commitGroup(group: Member[]): Promise<void> {
    let trx: ControlledTransaction<DB>;
    try {
      trx = await this.#db.startTransaction().execute();
    } catch (err) {
      // BEGIN IMMEDIATE failed (SQLITE_BUSY past busy_timeout: another process holds the write lock).
      for (const m of group) m.reject(err);
      return;
    }
    if (group.length === 1) {
      await this.#runAlone(trx, group[0]!);
      return;
    }
    const done: Member[] = [];
    const failed: Member[] = [];
    try {
      for (let i = 0; i < group.length; i++) {
        const m = group[i]!;
        const outcome = await this.#runMember(trx, m);
        if (outcome.kind === 'ok') done.push(m);
        else if (outcome.kind === 'failed') failed.push(m);
        else {
          // SQLite rolled the whole transaction back (disk full, I/O error): the members before lost their
          // writes too and the ones after never ran. None was answered yet, so each gets an error.
          m.reject(m.error ?? outcome.err);
          const err = new GroupCommitError('The grouped transaction was rolled back by the database', { cause: outcome.err });
          for (const other of [...done, ...group.slice(i + 1)]) other.reject(err);
          await trx.rollback().execute().catch(() => undefined);
          return;
        }
      }
      try {
        await trx.commit().execute();
      } catch (err) {
        // COMMIT failed (I/O error, SQLITE_BUSY): nothing of the group is durable, so every member fails.
        await trx.rollback().execute().catch(() => undefined);
        const lost = new GroupCommitError('The grouped transaction could not commit', { cause: err });
        for (const m of done) m.reject(lost);
        return;
      }
    } finally {
      // A failed member's caller hears of it once no body of the group runs any more: code it runs
      // then (a retry in a new transaction) is not taken for a nested transaction (run()).
      for (const m of failed) m.reject(m.error);
    }
    this.#onGroup?.(done.length);
    // Each member's hooks run in their order and its promise settles after them; members start in commit order.
    for (const m of done) void this.#afterCommit(m);
  }

  /** Runs a member's body; #body names it until the body settles or the microtask queue drains first. */
  async #runBody(m: Member, tx: Tx): Promise<unknown> {
    this.#body = m;
    process.nextTick(() => {
      // Called once the microtasks queued so far (and those they queue) have run: the body, still
      // pending, waits on something else than the database, and other requests' code may run now.
      if (this.#body === m) this.#body = undefined;
    });
    try {
      return await m.fn(tx);
    } finally {
      if (this.#body === m) this.#body = undefined;
    }
  }

  /** A group of one needs no savepoint (about 12 us each, its journal in memory): its failure rolls the transaction back. */
  async #runAlone(trx: ControlledTransaction<DB>, m: Member): Promise<void> {
    try {
      m.result = await this.#runBody(m, { db: trx, onCommit: (hook) => m.hooks.push(hook) });
    } catch (err) {
      await trx.rollback().execute().catch(() => undefined);
      m.reject(err);
      return;
    }
    try {
      await trx.commit().execute();
    } catch (err) {
      await trx.rollback().execute().catch(() => undefined);
      m.reject(err);
      return;
    }
    this.#onGroup?.(1);
    void this.#afterCommit(m);
  }

  /** Runs one member inside its savepoint; its own failure is kept in `m.error` (nothing of it is kept). */
  async #runMember(trx: ControlledTransaction<DB>, m: Member): Promise<{ kind: 'ok' } | { kind: 'failed' } | { kind: 'lost'; err: unknown }> {
    try {
      await trx.executeQuery(SAVEPOINT);
    } catch (err) {
      return { kind: 'lost', err };
    }
    try {
      m.result = await this.#runBody(m, { db: trx, onCommit: (hook) => m.hooks.push(hook) });
      await trx.executeQuery(RELEASE);
      return { kind: 'ok' };
    } catch (err) {
      m.hooks.length = 0;
      m.error = err;
      try {
        await trx.executeQuery(ROLLBACK_TO);
        await trx.executeQuery(RELEASE);
      } catch (rollbackErr) {
        // "no such savepoint": the database already rolled the whole transaction back.
        return { kind: 'lost', err: rollbackErr };
      }
      return { kind: 'failed' };
    }
  }

  async #afterCommit(m: Member): Promise<void> {
    for (const hook of m.hooks) {
      try {
        await hook();
      } catch (err) {
        this.#onHookError(err);
      }
    }
    m.resolve(m.result);
  }
}
