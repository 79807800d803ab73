// Helpers of the live-stream benchmarks (beacons, fanout): the caller's key, the subscriber process's
// protocol, a bare node:http SSE hub for the baselines, and latency summaries.
import fs from 'node:fs';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { frame } from '../src/events/hub.js';
import { openFileLimit, type Child } from './ipc.js';

// ---- The subscriber process (bench/sse-subscribers.ts) and what it answers ----

export const SUBSCRIBERS_SCRIPT = new URL('./sse-subscribers.ts', import.meta.url);

export interface OpenArg {
  /** A name for this set of connections: stats and close act on one group. */
  group: string;
  /** The stream's full URL. */
  url: string;
  headers: Record<string, string>;
  count: number;
  /** Connections whose `connected` event is still awaited at any time (keeps the accept backlog short). */
  concurrency: number;
  timeoutMs: number;
}

export interface OpenResult {
  opened: number;
  ms: number;
}

/** One event stamped with `meta.sent_at`, as its group's connections received it. */
export interface SeqStats {
  seq: number;
  sentAt: number;
  /** Deliveries of it. */
  n: number;
  /** Earliest and latest receive time (epoch ms, high resolution). */
  first: number;
  last: number;
  /** Time the subscriber process spent in the `data` handlers of the chunks that carried it. */
  handlerMs: number;
  /** Receive time minus `sentAt` of every delivery, in ms. */
  latencies: number[];
}

export interface GroupStats {
  connections: number;
  /** Connections closed before the group was closed (by the server, or an error). */
  closedEarly: number;
  /** Events after `connected` per connection (heartbeats are comments, not counted). */
  minEvents: number;
  maxEvents: number;
  totalEvents: number;
  /** The events stamped with `meta.sent_at` (and `meta.seq`), by seq. */
  seqs: SeqStats[];
  /** The last `data:` line received, for building a baseline's identical frame. */
  lastData: string | null;
}

/** The `connected` frame Muster's streams open with, for baselines. */
export const connectedFrame = (orgIds: number[]) => frame(undefined, { type: 'connected', org_ids: orgIds });

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

/** A bare SSE hub for node:http baselines: opens a stream with the same headers and first frame, and writes frames to all. */
export class BareHub {
  readonly streams = new Set<ServerResponse>();

  constructor(private readonly first: string) {}

  open(res: ServerResponse): void {
    res.writeHead(200, SSE_HEADERS);
    res.write(this.first);
    this.streams.add(res);
    res.on('close', () => this.streams.delete(res));
  }

  broadcast(text: string): void {
    for (const res of this.streams) res.write(text);
  }

  closeAll(): void {
    for (const res of this.streams) res.destroy();
    this.streams.clear();
  }
}

export interface BroadcastBaseline {
  url: string;
  /** Requests answered, each also written to every stream. */
  broadcasts(): number;
  close(): Promise<void>;
}

/**
 * The baseline of an ingest benchmark with live subscribers: a bare node:http server on which
 * `GET /v1/signals/stream` opens a stream (Muster's headers and first frame), and any other request is
 * answered with `answer` (JSON, or an empty body) and writes `text` to every open stream.
 */
export async function startBroadcastBaseline(answer: { status: number; body?: object }, text: string, orgIds: number[]): Promise<BroadcastBaseline> {
  const payload = Buffer.from(answer.body === undefined ? '' : JSON.stringify(answer.body));
  const headers: Record<string, string | number> = { 'content-length': payload.length };
  if (answer.body !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
  const hub = new BareHub(connectedFrame(orgIds));
  let broadcasts = 0;
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/v1/signals/stream')) {
      hub.open(res);
      return;
    }
    res.writeHead(answer.status, headers);
    res.end(payload);
    hub.broadcast(text);
    broadcasts++;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    broadcasts: () => broadcasts,
    close: () =>
      new Promise<void>((resolve, reject) => {
        hub.closeAll();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** Waits until `group` of the subscriber process has received `expected` events in all, for 10 s at most. */
export async function settle(receiver: Child, group: string, expected: number): Promise<void> {
  const deadline = performance.now() + 10_000;
  while ((await receiver.call<number>('count', group)) < expected && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Throws unless each of the `subscribers` connections is open and received exactly the `published` events. */
export function checkDeliveries(who: string, s: GroupStats, published: number, subscribers: number): void {
  if (s.connections !== subscribers || s.closedEarly > 0 || s.minEvents !== published || s.maxEvents !== published) {
    throw new Error(`${who}: ${s.connections} subscribers (${s.closedEarly} closed) got ${s.minEvents} to ${s.maxEvents} events; ${published} were published`);
  }
}

/**
 * After a run: waits until each group has received every event published to it (by name: Muster's
 * published count, a baseline's broadcasts), checks that each of its `subscribers` got exactly those,
 * and answers the groups' stats by name. The count is read again after each wait and after the stats
 * until it stops moving: a request of the run's last moments may still be handled (and broadcast) after
 * the load ends, and with Redis an event is published after its request is answered and heard back later.
 */
export async function checkedDeliveries(receiver: Child, subscribers: number, published: Record<string, () => number>): Promise<Record<string, GroupStats>> {
  const out: Record<string, GroupStats> = {};
  for (const [group, count] of Object.entries(published)) {
    let n: number;
    let stats: GroupStats;
    do {
      n = count();
      await settle(receiver, group, subscribers * n);
      stats = await receiver.call<GroupStats>('stats', group);
    } while (n !== count());
    checkDeliveries(group, stats, n, subscribers);
    out[group] = stats;
  }
  return out;
}

// ---- Figures ----

export interface Distribution {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles. */
export function distribution(values: readonly number[]): Distribution {
  const s = Float64Array.from(values).sort();
  const at = (p: number) => (s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!);
  return { n: s.length, p50: at(50), p95: at(95), p99: at(99), max: s.length ? s[s.length - 1]! : NaN };
}

export const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * How far a child's clock (performance.timeOrigin + performance.now()) is from this process's, in ms:
 * the offset seen in the quickest of 20 round trips, and the bound on it (half that round trip).
 */
export async function clockOffset(child: Child): Promise<{ offsetMs: number; boundMs: number }> {
  let best = { offsetMs: NaN, boundMs: Infinity };
  for (let i = 0; i < 20; i++) {
    const t0 = performance.timeOrigin + performance.now();
    const remote = await child.call<number>('clock');
    const t1 = performance.timeOrigin + performance.now();
    if ((t1 - t0) / 2 < best.boundMs) best = { offsetMs: remote - (t0 + t1) / 2, boundMs: (t1 - t0) / 2 };
  }
  return best;
}

/** Kernel-wide TCP socket count and buffer memory (bytes) from /proc/net/sockstat; undefined off Linux. */
export function tcpSockstat(): { inuse: number; memBytes: number } | undefined {
  try {
    const line = fs
      .readFileSync('/proc/net/sockstat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('TCP:'));
    const inuse = /inuse (\d+)/.exec(line ?? '')?.[1];
    const mem = /mem (\d+)/.exec(line ?? '')?.[1];
    if (inuse === undefined || mem === undefined) return undefined;
    return { inuse: Number(inuse), memBytes: Number(mem) * 4096 }; // `mem` counts pages
  } catch {
    return undefined;
  }
}

// ---- The machine's limits on many streams ----

/** The limits of this machine and process, read before anything starts (Linux; `undefined` where unreadable). */
export interface Limits {
  /** Soft and hard limit on open files of this process; the children raise their soft limit up to the hard one. */
  openFiles: { soft: string; hard: string } | undefined;
  /** Ephemeral ports for the subscribers' connect()s (net.ipv4.ip_local_port_range). */
  ports: { low: number; high: number } | undefined;
  /** Backlog cap of a listening socket (net.core.somaxconn). */
  somaxconn: number | undefined;
}

const readProc = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

export function machineLimits(): Limits {
  const line = readProc('/proc/self/limits')
    ?.split('\n')
    .find((l) => l.startsWith('Max open files'));
  const [soft, hard] = line?.split(/\s+/).slice(3, 5) ?? [];
  const range = readProc('/proc/sys/net/ipv4/ip_local_port_range')?.trim().split(/\s+/).map(Number);
  const somaxconn = Number(readProc('/proc/sys/net/core/somaxconn'));
  return {
    openFiles: soft !== undefined && hard !== undefined ? { soft, hard } : undefined,
    ports: range?.length === 2 ? { low: range[0]!, high: range[1]! } : undefined,
    somaxconn: Number.isFinite(somaxconn) && somaxconn > 0 ? somaxconn : undefined,
  };
}

/**
 * Fails benchmark `name`, before any figure, when the machine cannot hold the streams: `connections` to
 * one port need as many ephemeral ports (one source address), and a listen backlog for the `concurrency`
 * connecting at once.
 */
export function checkMachine(name: string, l: Limits, connections: number, concurrency: number): void {
  const ports = l.ports ? l.ports.high - l.ports.low + 1 : undefined;
  if (ports !== undefined && ports < connections) {
    throw new Error(
      `${name}: net.ipv4.ip_local_port_range (${l.ports!.low}-${l.ports!.high}) gives ${ports} ephemeral ports, fewer than the ${connections} connections to one server port; widen it (sysctl -w net.ipv4.ip_local_port_range="1024 65535")`,
    );
  }
  if (l.somaxconn !== undefined && l.somaxconn < concurrency) {
    throw new Error(`${name}: net.core.somaxconn is ${l.somaxconn}, below the ${concurrency} streams opened at once; raise it (sysctl -w net.core.somaxconn=4096)`);
  }
}

/** Fails benchmark `name` when a child could not raise its open-file limit to the `needed` its `streams` take. */
export function checkChildFiles(name: string, who: string, child: Child, needed: number, streams: number): void {
  const got = openFileLimit(child.pid);
  if (got !== undefined && got < needed) {
    throw new Error(
      `${name}: ${who} may open ${got} files, and ${streams} streams need ${needed}; the hard limit (ulimit -Hn) caps it: raise it (ulimit -Hn, LimitNOFILE=, docker run --ulimit nofile=${needed * 2})`,
    );
  }
}
