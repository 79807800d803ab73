// SSE subscribers in their own process (forked by the beacons and fanout benchmarks), so that reading
// the streams never shares an event loop, or a heap, with the server under measurement.
//
// Plain `net` sockets with a minimal reader instead of http.get: the reader costs a few microseconds a
// chunk, which matters when this one process is the receiving end of 5,000 streams. It timestamps each
// chunk first thing in its `data` handler, counts `data:` lines, and for frames carrying `"sent_at":`
// (a high-resolution epoch time put in `meta` by the sender) records the delivery latency.
import net from 'node:net';
import { serve } from './ipc.js';
import type { GroupStats, OpenArg, OpenResult, SeqStats } from './sse.js';

interface Conn {
  socket: net.Socket;
  /** Unparsed tail (an incomplete line, or the response head). */
  buf: string;
  head: boolean;
  connected: boolean;
  events: number;
  closed: boolean;
}

interface Group {
  conns: Conn[];
  seqs: Map<number, SeqStats>;
  lastData: string | null;
}

const groups = new Map<string, Group>();
const now = () => performance.timeOrigin + performance.now();

function groupOf(name: string): Group {
  let g = groups.get(name);
  if (!g) groups.set(name, (g = { conns: [], seqs: new Map(), lastData: null }));
  return g;
}

/** Handles one `data:` line; returns the seq of a stamped event, else undefined. */
function onDataLine(g: Group, c: Conn, line: string, t: number, onConnected: () => void): SeqStats | undefined {
  if (!c.connected && line.includes('"type":"connected"')) {
    c.connected = true;
    onConnected();
    return undefined;
  }
  c.events++;
  g.lastData = line;
  const i = line.indexOf('"sent_at":');
  if (i < 0) return undefined;
  const sentAt = parseFloat(line.slice(i + 10, i + 40));
  const j = line.indexOf('"seq":');
  const seq = j < 0 ? -1 : parseInt(line.slice(j + 6, j + 20), 10);
  let s = g.seqs.get(seq);
  if (!s) g.seqs.set(seq, (s = { seq, sentAt, n: 0, first: t, last: t, handlerMs: 0, latencies: [] }));
  s.n++;
  s.latencies.push(t - sentAt);
  if (t < s.first) s.first = t;
  if (t > s.last) s.last = t;
  return s;
}

function onChunk(g: Group, c: Conn, chunk: Buffer, onConnected: () => void, onRefused: (why: string) => void): void {
  const t = now();
  let text = c.buf + chunk.toString('latin1');
  if (c.head) {
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) {
      c.buf = text;
      return;
    }
    const status = text.slice(0, text.indexOf('\r\n'));
    if (!status.startsWith('HTTP/1.1 200 ')) {
      onRefused(`${status}: ${text.slice(end + 4, end + 300)}`);
      return;
    }
    c.head = false;
    text = text.slice(end + 4);
  }
  // The body is chunked; a chunk-size line is a line of its own and never starts with `data: `.
  const last = text.lastIndexOf('\n');
  if (last < 0) {
    c.buf = text;
    return;
  }
  c.buf = text.slice(last + 1);
  let stamped: SeqStats | undefined;
  for (let start = 0; start <= last; ) {
    const nl = text.indexOf('\n', start);
    if (text.startsWith('data: ', start)) stamped = onDataLine(g, c, text.slice(start, nl), t, onConnected) ?? stamped;
    start = nl + 1;
  }
  if (stamped) stamped.handlerMs += now() - t;
}

function open(arg: OpenArg): Promise<OpenResult> {
  const g = groupOf(arg.group);
  const u = new URL(arg.url);
  const head = Object.entries(arg.headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const request = `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nAccept: text/event-stream\r\n${head}\r\n`;
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    let started = 0;
    let connected = 0;
    let failed = false;
    const fail = (why: string) => {
      if (failed) return;
      failed = true;
      clearTimeout(timer);
      reject(new Error(`${arg.group}: ${connected} of ${arg.count} streams open when one failed: ${why}`));
    };
    const timer = setTimeout(() => fail(`timed out after ${arg.timeoutMs} ms`), arg.timeoutMs);
    const onConnected = () => {
      connected++;
      if (connected === arg.count) {
        clearTimeout(timer);
        resolve({ opened: connected, ms: performance.now() - t0 });
      } else if (started < arg.count && !failed) {
        startOne();
      }
    };
    const startOne = () => {
      started++;
      const socket = net.connect({ host: u.hostname, port: Number(u.port), noDelay: true });
      const c: Conn = { socket, buf: '', head: true, connected: false, events: 0, closed: false };
      g.conns.push(c);
      socket.on('connect', () => socket.write(request));
      socket.on('data', (chunk: Buffer) => onChunk(g, c, chunk, onConnected, fail));
      socket.on('error', (err) => {
        if (!c.connected) fail(err.message);
      });
      socket.on('close', () => {
        c.closed = true;
        if (!c.connected) fail('closed before the connected event');
      });
    };
    for (let i = 0; i < Math.min(arg.concurrency, arg.count); i++) startOne();
  });
}

function stats(name: string): GroupStats {
  const g = groupOf(name);
  let min = Infinity;
  let max = 0;
  let total = 0;
  let closedEarly = 0;
  for (const c of g.conns) {
    min = Math.min(min, c.events);
    max = Math.max(max, c.events);
    total += c.events;
    if (c.closed) closedEarly++;
  }
  return {
    connections: g.conns.length,
    closedEarly,
    minEvents: g.conns.length ? min : 0,
    maxEvents: max,
    totalEvents: total,
    seqs: [...g.seqs.values()].sort((a, b) => a.seq - b.seq),
    lastData: g.lastData,
  };
}

/** Destroys a group's sockets and waits until they are closed. */
async function close(name: string): Promise<void> {
  const g = groups.get(name);
  if (!g) return;
  const closed = g.conns.map((c) => (c.closed ? Promise.resolve() : new Promise<void>((resolve) => c.socket.once('close', () => resolve()))));
  for (const c of g.conns) c.socket.destroy();
  await Promise.all(closed);
  groups.delete(name);
}

serve(
  {
    clock: () => now(),
    /** CPU time this process has used (user + system), in ms. */
    cpu: () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
    open: (arg) => open(arg as OpenArg),
    stats: (arg) => stats(arg as string),
    /** Events received by a group so far, summed over its connections (cheap, for polling). */
    count: (arg) => groupOf(arg as string).conns.reduce((n, c) => n + c.events, 0),
    close: (arg) => close(arg as string),
  },
  async () => {
    for (const name of [...groups.keys()]) await close(name);
  },
);
