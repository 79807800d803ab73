// The server side of the fanout benchmarks, alone in its own process (run with --expose-gc) so that its
// memory is measured without the subscribers, the orchestrating benchmark, or anything run before it.
// `muster`: a real Muster (startMuster) with a user and a live key, on SQLite, or on the database and
// Redis that `start`'s options name (fanout-cluster: two of these processes on one schema and one Redis,
// the second given the first's key). `baseline`: a bare node:http SSE server, no framework, no auth, no
// database. Both post one `note` per `post` call, stamped with a high-resolution send time in
// `meta.sent_at`, and report when its frame was written to every stream; a Muster also answers when its
// hub wrote each stamped event (`dispatched`), including events posted on another instance.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PerformanceObserver } from 'node:perf_hooks';
import { createIdSource, type LiveEvent } from '../src/events/bus.js';
import { frame } from '../src/events/hub.js';
import { serve } from './ipc.js';
import type { MusterServer } from './lib.js';
import { BareHub, connectedFrame } from './sse.js';
import { liveKey } from './lib.js';

export type ServerKind = 'muster' | 'baseline';

export interface Started {
  url: string;
  /** The live key for `x-api-key` (Muster), or null (the baseline asks for none). */
  key: string | null;
}

/** Options of `start` (Muster only). */
export interface StartOptions {
  /** On top of the benchmarks' environment: DATABASE_URL, DATABASE_SCHEMA, REDIS_URL, REDIS_PREFIX... */
  env?: Record<string, string>;
  /** The live key of a user already in the database (a second instance on the same data); without it one is made. */
  key?: string;
}

/** When this process's hub wrote one stamped event to its streams: epoch ms on this process's clock. */
export interface Dispatched {
  seq: number;
  /** The hub's write loop over this process's streams: its start and end. */
  start: number;
  end: number;
  /** The ticks queued by the loop have run: every write handed to the kernel. */
  flushed: number;
  /** CPU time (user + system) of this process from the loop's start until `flushed` (ms): load-independent. */
  cpuMs: number;
}

export interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

export interface Posted {
  sentAt: number;
  /** From sentAt to the start, and to the end, of the loop writing the frame to every stream (ms). */
  dispatchStartMs: number;
  dispatchEndMs: number;
  /**
   * From sentAt until the writes reached the kernel. ServerResponse.write() of a chunked body corks the
   * socket and uncorks it on process.nextTick, so the loop only queues; the write syscalls follow it.
   */
  flushedMs: number;
  /** From sentAt until the POST was answered (Muster) or the loop returned (baseline). */
  answeredMs: number;
  /** Garbage-collection pauses between the send and the flush (ms, summed). */
  gcMs: number;
  /**
   * CPU time (user + system) of the server process from the send until every write was handed to the
   * kernel (ms): load-independent, unlike the times above, since a core taken by another process is not counted.
   */
  cpuMs: number;
}

export interface ServerStats {
  streams: number;
  dropped: number;
  maxBufferedSeen: number;
}

const kind = process.argv[2] as ServerKind;
if (kind !== 'muster' && kind !== 'baseline') throw new Error(`fanout-server: unknown kind ${process.argv[2]}`);

const now = () => performance.timeOrigin + performance.now();
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const NOTE = 'Fan-out probe';

let muster: MusterServer | undefined;
let bare: { server: http.Server; hub: BareHub } | undefined;
let key = '';
/** Stamped events by seq, as the hub wrote them (`flushed` 0 until the writes reached the kernel). */
const dispatched = new Map<number, Dispatched>();
const waiting = new Map<number, (d: Dispatched) => void>();

/** GC pauses, as [start, duration] on the performance.now() clock. */
const gcPauses: [number, number][] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push([e.startTime, e.duration]);
}).observe({ entryTypes: ['gc'] });

/** GC time that overlapped [from, to] (epoch ms), once the observer has had the entries delivered. */
async function gcBetween(from: number, to: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  const a = from - performance.timeOrigin;
  const b = to - performance.timeOrigin;
  let total = 0;
  for (const [start, duration] of gcPauses) total += Math.max(0, Math.min(b, start + duration) - Math.max(a, start));
  gcPauses.length = 0;
  return total;
}

/** Resolves after the ticks queued so far (the uncorks of the writes just made) have run. */
const afterTicks = () => new Promise<void>((resolve) => process.nextTick(resolve));

/** `meta.seq` of a stamped note: from the payload (published here), or the serialised data (from Redis). */
function seqOf(event: LiveEvent): number | undefined {
  if (event.data !== undefined) {
    const m = /"seq":(\d+)/.exec(event.data);
    return m ? Number(m[1]) : undefined;
  }
  const seq = (event.payload as { meta?: { seq?: unknown } } | undefined)?.meta?.seq;
  return typeof seq === 'number' ? seq : undefined;
}

/** Resolves when the hub has written event `seq` and its writes reached the kernel (rejects after `timeoutMs`). */
function whenDispatched(seq: number, timeoutMs = 15_000): Promise<Dispatched> {
  const d = dispatched.get(seq);
  if (d && d.flushed > 0) return Promise.resolve(d);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(seq);
      reject(new Error(`event ${seq} was not dispatched by this instance within ${timeoutMs} ms`));
    }, timeoutMs);
    waiting.set(seq, (x) => {
      clearTimeout(timer);
      resolve(x);
    });
  });
}

async function start(arg: unknown): Promise<Started> {
  const opts = (arg ?? {}) as StartOptions;
  if (kind === 'muster') {
    // Imported here, so that the baseline's process does not load Muster's modules at all.
    const { startMuster } = await import('./lib.js');
    muster = await startMuster(opts.env ?? {});
    key = opts.key ?? (await liveKey(muster.app));
    // With Redis, an event posted anywhere reaches this hub through the subscriber connection: wait until it listens.
    const bus = muster.ctx.events.bus;
    for (let i = 0; bus.accessEpoch && bus.accessEpoch() === undefined; i++) {
      if (i === 500) throw new Error('the Redis bus did not subscribe within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Time the hub's dispatch, wherever the event comes from: the bus calls it synchronously (the local bus
    // within the POST, the Redis bus when the event comes back on the subscriber connection), and it writes
    // to every stream of the event's org in one loop, so wrapping it brackets the writes.
    const hub = muster.ctx.events.hub as unknown as { dispatch(event: LiveEvent): void };
    const dispatch = hub.dispatch.bind(hub);
    hub.dispatch = (event) => {
      const cpu0 = cpuNow();
      const start = now();
      dispatch(event);
      const end = now();
      const seq = seqOf(event);
      if (seq === undefined) return;
      const d: Dispatched = { seq, start, end, flushed: 0, cpuMs: 0 };
      dispatched.set(seq, d);
      process.nextTick(() => {
        d.flushed = now();
        d.cpuMs = cpuNow() - cpu0;
        waiting.get(seq)?.(d);
        waiting.delete(seq);
      });
    };
    return { url: muster.url, key };
  }
  const hub = new BareHub(connectedFrame([1]));
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/v1/signals/stream')) hub.open(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  bare = { server, hub };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, key: null };
}

async function memory(): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('fanout-server needs --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return { rss, heapUsed, heapTotal, external, arrayBuffers };
}

const nextId = createIdSource();
let stored = 0;

async function post(arg: unknown): Promise<Posted> {
  const { seq } = arg as { seq: number };
  if (muster) {
    const cpu0 = cpuNow();
    const sentAt = now();
    const res = await muster.app.inject({
      method: 'POST',
      url: '/v1/signals',
      headers: { 'x-api-key': key },
      payload: { type: 'note', note: NOTE, meta: { sent_at: sentAt, seq } },
    });
    const answeredAt = now();
    if (res.statusCode !== 201) throw new Error(`POST /v1/signals: ${res.statusCode} ${res.body}`);
    const d = await whenDispatched(seq);
    await afterTicks();
    const cpuMs = cpuNow() - cpu0;
    if (d.start < sentAt) throw new Error(`event ${seq} was dispatched before it was posted`);
    return {
      cpuMs,
      gcMs: await gcBetween(sentAt, d.flushed),
      sentAt,
      dispatchStartMs: d.start - sentAt,
      dispatchEndMs: d.end - sentAt,
      flushedMs: d.flushed - sentAt,
      answeredMs: answeredAt - sentAt,
    };
  }
  if (!bare) throw new Error('not started');
  const cpu0 = cpuNow();
  const sentAt = now();
  // The record Muster broadcasts for a note, field for field, serialised once for every stream.
  const record = {
    Id: ++stored,
    type: 'note',
    user_id: 1,
    user_name: 'Bench',
    org_id: 1,
    livemode: true,
    lat: null,
    lng: null,
    accuracy: null,
    note: NOTE,
    image_url: null,
    ticket_id: null,
    meta: { sent_at: sentAt, seq },
    created_at: new Date().toISOString(),
  };
  const text = frame(nextId(), { type: 'signal.note', payload: record });
  const start = now();
  bare.hub.broadcast(text);
  const end = now();
  await afterTicks();
  const done = now();
  const cpuMs = cpuNow() - cpu0;
  return { cpuMs, gcMs: await gcBetween(sentAt, done), sentAt, dispatchStartMs: start - sentAt, dispatchEndMs: end - sentAt, flushedMs: done - sentAt, answeredMs: end - sentAt };
}

function stats(): ServerStats {
  if (muster) {
    const s = muster.ctx.events.hub.stats();
    return { streams: s.subscribers, dropped: s.dropped, maxBufferedSeen: s.maxBufferedSeen };
  }
  return { streams: bare?.hub.streams.size ?? 0, dropped: 0, maxBufferedSeen: 0 };
}

/** The stamped events this hub wrote, of those `seqs` (waiting up to `timeoutMs` for each one not yet written). */
async function dispatchedOf(arg: unknown): Promise<Dispatched[]> {
  const { seqs, timeoutMs } = arg as { seqs: number[]; timeoutMs: number };
  return Promise.all(seqs.map((seq) => whenDispatched(seq, timeoutMs)));
}

serve({ start, memory, post, stats, dispatched: dispatchedOf, clock: () => now() }, async () => {
  if (muster) await muster.close();
  if (bare) {
    const { server, hub } = bare;
    hub.closeAll();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
