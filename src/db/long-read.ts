import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { CompiledQuery } from 'kysely';

/**
 * Long reads on SQLite (a report over a year of incidents: seconds of one core) run in a worker
 * thread on a read-only connection of their own, so the event loop keeps answering beacons, pages
 * and every other request meanwhile; better-sqlite3 is synchronous, and in the server's own thread
 * such a statement would stall them all for as long as it runs. WAL lets the reader see every
 * commit made before its statement began, as the server's own connection would. One worker per
 * database, started on the first long read and stopped after IDLE_MS without one; its statements
 * run one after another, in the order asked.
 */
const IDLE_MS = 30_000;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.module);
const db = new SQLite(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('temp_store = MEMORY');
const statements = new Map();
parentPort.on('message', ({ id, sql, parameters }) => {
  try {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= 100) statements.clear();
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    if (!statement.reader) throw new Error('a long read must be a statement that returns rows');
    parentPort.postMessage({ id, rows: statement.all(parameters) });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
`;

interface Pending {
  resolve: (rows: unknown[]) => void;
  reject: (err: Error) => void;
}

export class SqliteLongReader {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private idle: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly file: string) {}

  read<R>(query: CompiledQuery<R>): Promise<R[]> {
    if (this.closed) return Promise.reject(new Error('the database is closed'));
    const worker = this.start();
    clearTimeout(this.idle);
    worker.ref();
    const id = ++this.seq;
    return new Promise<R[]>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
      worker.postMessage({ id, sql: query.sql, parameters: query.parameters });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idle);
    this.fail(new Error('the database is closed'));
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(WORKER, { eval: true, workerData: { module, file: this.file } });
    w.on('message', (m: { id: number; rows?: unknown[]; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.rows ?? []);
      if (this.pending.size === 0) this.rest(w);
    });
    w.on('error', (err) => this.lost(w, err));
    w.on('exit', (code) => this.lost(w, new Error(`the long-read worker exited (${code})`)));
    this.worker = w;
    return w;
  }

  /** Nothing waits: the worker no longer keeps the process alive, and stops after IDLE_MS. */
  private rest(w: Worker): void {
    w.unref();
    this.idle = setTimeout(() => {
      if (this.worker !== w || this.pending.size > 0) return;
      this.worker = undefined;
      void w.terminate();
    }, IDLE_MS).unref();
  }

  private lost(w: Worker, err: Error): void {
    if (this.worker !== w) return;
    this.worker = undefined;
    this.fail(err);
  }

  private fail(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
