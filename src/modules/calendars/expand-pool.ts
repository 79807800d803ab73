// Untrusted calendars are read off the event loop: one worker thread per context, with a heap
// limit (resourceLimits) and a deadline per calendar. A calendar that exhausts either is refused
// with a `CalendarLimitError` and the worker is replaced; the server's own heap and event loop
// never see the work (issue #31: a hostile VTIMEZONE once took the process to 4.5 GB and down).
import { Worker } from 'node:worker_threads';
import type { AppContext } from '../../context.js';
import { CalendarLimitError, type ExpandOptions, type Interval } from './expand.js';
import type { ExpandAnswer, ExpandJob } from './expand-worker.js';

/** An idle worker is stopped after this long, so the memory of a large calendar is given back. */
const IDLE_MS = 30_000;

interface Pending {
  job: ExpandJob;
  resolve: (intervals: Interval[]) => void;
  reject: (err: Error) => void;
}

// Compiled (dist/, the test build) the worker is the .js file beside this one; run from source
// through tsx, the worker registers tsx itself first (workers do not inherit the loader hooks).
const here = import.meta.url;
function workerUrl(): URL {
  if (!here.endsWith('.ts')) return new URL('./expand-worker.js', here);
  const boot = `const { register } = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))});
register();
await import(${JSON.stringify(new URL('./expand-worker.ts', here).href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(boot)}`);
}

export interface ExpanderLimits {
  /** Deadline of one calendar, from the moment the worker takes it. */
  timeoutMs: number;
  /** The worker's old-generation heap, in MB. */
  memoryMb: number;
}

/** Runs `busyIntervals` in a worker thread, one calendar at a time, within the limits. */
export class CalendarExpander {
  private worker: Worker | undefined;
  private ready = false;
  private running: Pending | undefined;
  private readonly queue: Pending[] = [];
  private deadline: NodeJS.Timeout | undefined;
  private idle: NodeJS.Timeout | undefined;
  private seq = 0;
  private closed = false;

  constructor(
    private readonly limits: ExpanderLimits,
    private readonly log: AppContext['log'],
  ) {}

  expand(texts: string[], options: ExpandOptions): Promise<Interval[]> {
    if (this.closed) return Promise.reject(new Error('the calendar reader has stopped'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job: { id: ++this.seq, texts, options }, resolve, reject });
      this.next();
    });
  }

  /** Stops the worker; calendars still waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idle);
    for (const p of this.queue.splice(0)) p.reject(new Error('the calendar reader has stopped'));
    this.finish(new Error('the calendar reader has stopped'));
    await this.stop();
  }

  private start(): Worker {
    const w = new Worker(workerUrl(), {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.memoryMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    w.on('message', (a: ExpandAnswer) => {
      if (this.worker !== w) return;
      if ('ready' in a) {
        this.ready = true;
        return this.next();
      }
      if (!this.running || a.id !== this.running.job.id) return;
      if ('intervals' in a) this.finish(undefined, a.intervals);
      else this.finish(a.limit ? new CalendarLimitError(a.error) : new Error(a.error));
      this.next();
    });
    w.on('error', (err: Error & { code?: string }) => this.lost(w, err));
    w.on('exit', (code) => this.lost(w, new Error(`the calendar reader exited (${code})`)));
    return w;
  }

  /** The worker died: the calendar it was reading failed (a limit when it ran out of memory). */
  private lost(w: Worker, err: Error & { code?: string }): void {
    if (this.worker !== w) return;
    const booted = this.ready;
    this.worker = undefined;
    this.ready = false;
    if (!booted) {
      // It never loaded: a fault of the installation, not of a calendar. Fail what waits, do not loop.
      this.log.error({ err }, 'calendar reader could not start');
      for (const p of this.queue.splice(0)) p.reject(new Error('the calendar reader could not start'));
      return;
    }
    const oom = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
    if (!oom) this.log.error({ err }, 'calendar reader failed');
    this.finish(oom ? new CalendarLimitError(`reading it needs more than ${this.limits.memoryMb} MB`) : new Error('the calendar reader failed'));
    this.next();
  }

  private next(): void {
    if (this.running || this.closed) return;
    if (this.queue.length === 0) {
      this.worker?.unref();
      clearTimeout(this.idle);
      this.idle = setTimeout(() => void this.stop(), IDLE_MS).unref();
      return;
    }
    clearTimeout(this.idle);
    if (!this.worker) {
      this.ready = false;
      this.worker = this.start();
    }
    this.worker.ref();
    // The worker says when it has loaded; the first calendar waits for that.
    if (!this.ready) return;
    const p = this.queue.shift()!;
    this.running = p;
    this.deadline = setTimeout(() => {
      this.finish(new CalendarLimitError(`reading it takes longer than ${this.limits.timeoutMs} ms`));
      void this.stop().then(() => this.next());
    }, this.limits.timeoutMs);
    this.worker.postMessage(p.job);
  }

  /** Settles the running calendar (an error, or its intervals). */
  private finish(err: Error | undefined, intervals?: Interval[]): void {
    const p = this.running;
    this.running = undefined;
    clearTimeout(this.deadline);
    if (!p) return;
    if (err) p.reject(err);
    else p.resolve(intervals ?? []);
  }

  private async stop(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.ready = false;
    if (w) await w.terminate();
  }
}

const expanders = new WeakMap<AppContext, CalendarExpander>();

/** The busy intervals of untrusted iCalendar texts, computed in the context's calendar worker. */
export function expandOffThread(ctx: AppContext, texts: string[], options: ExpandOptions): Promise<Interval[]> {
  let e = expanders.get(ctx);
  if (!e) {
    e = new CalendarExpander({ timeoutMs: ctx.config.calendarExpandTimeoutMs, memoryMb: ctx.config.calendarExpandMemoryMb }, ctx.log);
    expanders.set(ctx, e);
    const made = e;
    ctx.onClose(() => made.close());
  }
  return e.expand(texts, options);
}
