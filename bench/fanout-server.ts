// The server side of the fanout benchmark, alone in its own process (run with --expose-gc) so that its
// memory is measured without the subscribers, the orchestrating benchmark, or anything run before it.
// `muster`: a real Muster (startMuster) with a user and a live key. `baseline`: a bare node:http SSE
// server, no framework, no auth, no database. Both post one `note` per `post` call, stamped with a
// high-resolution send time in `meta.sent_at`, and report when its frame was written to every stream.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PerformanceObserver } from 'node:perf_hooks';
import { createIdSource } from '../src/events/bus.js';
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
let dispatchStart = 0;
let dispatchEnd = 0;
let flushed = 0;

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

async function start(): Promise<Started> {
  if (kind === 'muster') {
    // Imported here, so that the baseline's process does not load Muster's modules at all.
    const { startMuster } = await import('./lib.js');
    muster = await startMuster();
    key = await liveKey(muster.app);
    // Time the hub's dispatch: the bus calls the hub synchronously, so wrapping publish brackets its writes.
    const bus = muster.ctx.events.bus;
    const publish = bus.publish.bind(bus);
    bus.publish = (event) => {
      dispatchStart = now();
      publish(event);
      dispatchEnd = now();
      process.nextTick(() => (flushed = now()));
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
    await afterTicks();
    const cpuMs = cpuNow() - cpu0;
    if (dispatchStart < sentAt || flushed < dispatchEnd) throw new Error('the note was not published');
    return {
      cpuMs,
      gcMs: await gcBetween(sentAt, flushed),
      sentAt,
      dispatchStartMs: dispatchStart - sentAt,
      dispatchEndMs: dispatchEnd - sentAt,
      flushedMs: flushed - sentAt,
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

serve({ start, memory, post, stats, clock: () => now() }, async () => {
  if (muster) await muster.close();
  if (bare) {
    const { server, hub } = bare;
    hub.closeAll();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
