// 10,000 SSE subscribers on one Muster process, against a bare node:http SSE server holding the same
// connections: memory per idle subscriber, and delivery latency of one event to all of them.
//
// Each server runs alone in a fresh child process (bench/fanout-server.ts, with --expose-gc), so its
// memory is its own and not what earlier benchmarks left in this one. The 10,000 subscribers are one
// other process (bench/sse-subscribers.ts). This process only orchestrates.
import os from 'node:os';
import type { Memory, Posted, ServerKind, ServerStats, Started } from './fanout-server.js';
import { forkTs, openFileLimit, type Child } from './ipc.js';
import { machine, sized, type BenchResult } from './lib.js';
import {
  SUBSCRIBERS_SCRIPT,
  checkChildFiles,
  checkMachine,
  clockOffset,
  distribution,
  machineLimits,
  median,
  tcpSockstat,
  type Distribution,
  type GroupStats,
  type Limits,
  type OpenResult,
} from './sse.js';

const NAME = 'fanout';
const SUBSCRIBERS = sized(10_000, 200);
const EVENTS = sized(10, 3);
const SPACING_MS = 200;
/** Seqs of the events posted while the subscriber process is stopped (server-side timings only). */
const PAUSED_SEQ = 100;
const ROUNDS = sized(3, 1);
/** Streams whose `connected` event is awaited at any one time while opening. */
const OPEN_CONCURRENCY = 200;
/** Opened and closed before the first memory reading, so first-use allocations are not charged to the subscribers. */
const WARMUP_STREAMS = sized(200, 20);
const IDLE_MS = 1000;
/** The issue's goals (#19): p99 within 1.2x the bare server's of the same run, at most 10 KB of RSS per idle stream. */
const GOAL_P99_RATIO = 1.2;
const GOAL_BYTES_PER_SUBSCRIBER = 10 * 1024;
/** Files a process holds besides the streams' sockets (modules, the database and its WAL, IPC, the listener...). */
const SPARE_FILES = 1024;
/** Open files each child process needs: every stream's socket, the warm-up's too while they close, and the rest. */
const FILES_NEEDED = SUBSCRIBERS + WARMUP_STREAMS + SPARE_FILES;
/** `id: `, a 16-digit event id (epoch ms x 1000) and a newline: the line of a frame the subscribers do not keep. */
const ID_LINE_BYTES = 21;

const SERVER_SCRIPT = new URL('./fanout-server.ts', import.meta.url);
const GROUP = 'main';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

interface Phase {
  kind: ServerKind;
  before: Memory;
  after: Memory;
  /** Change of the kernel's TCP buffer memory while the streams opened (whole machine, both ends). */
  sockMemDeltaBytes: number | undefined;
  openMs: number;
  /** Server-side timings of the events posted while the subscribers read, and while they were stopped. */
  live: Posted[];
  paused: Posted[];
  /** Receive minus send, every delivery of every live event. */
  latencies: number[];
  /** Per live event: its last delivery minus its send (ms). */
  lastMs: number[];
  /** CPU the subscriber process used per delivery of the live events (µs). */
  receiverCpuUs: number;
  server: ServerStats;
  clockBoundMs: number;
  frameBytes: number;
}

const cpuMs = (receiver: Child) => receiver.call<number>('cpu');

/** Posts EVENTS notes SPACING_MS apart, numbered from `firstSeq`. */
async function postEvents(server: Child, firstSeq: number): Promise<Posted[]> {
  const posts: Posted[] = [];
  const t0 = performance.now();
  for (let i = 0; i < EVENTS; i++) {
    await sleep(t0 + i * SPACING_MS - performance.now());
    posts.push(await server.call<Posted>('post', { seq: firstSeq + i }));
  }
  return posts;
}

/** Waits until the subscribers have received `expected` events in all (15 s at most). */
async function awaitDeliveries(receiver: Child, expected: number): Promise<void> {
  const deadline = performance.now() + 15_000;
  while ((await receiver.call<number>('count', GROUP)) < expected && performance.now() < deadline) await sleep(50);
}

/**
 * One server in a fresh process: memory before and after SUBSCRIBERS idle streams; EVENTS notes while the
 * subscribers read (delivery latency); EVENTS more with the subscriber process stopped (SIGSTOP), so
 * the server's own timings are taken without a receiver competing for the 2 cores.
 */
async function phase(kind: ServerKind, receiver: Child): Promise<Phase> {
  const server = await forkTs(SERVER_SCRIPT, [kind], { exposeGc: true, openFiles: FILES_NEEDED });
  let stopped = false;
  try {
    const started = await server.call<Started>('start');
    checkOpenFiles(`the ${kind} server`, server);
    const url = `${started.url}/v1/signals/stream`;
    const headers: Record<string, string> = started.key ? { 'x-api-key': started.key } : {};
    const open = (group: string, count: number) =>
      receiver.call<OpenResult>('open', { group, url, headers, count, concurrency: OPEN_CONCURRENCY, timeoutMs: 180_000 });

    await open('warm', WARMUP_STREAMS);
    await receiver.call('close', 'warm');
    await sleep(200);

    const before = await server.call<Memory>('memory');
    const sockBefore = tcpSockstat();
    const { ms: openMs } = await open(GROUP, SUBSCRIBERS);
    await sleep(IDLE_MS);
    const after = await server.call<Memory>('memory');
    const sockAfter = tcpSockstat();
    const connected = await server.call<ServerStats>('stats');
    if (connected.streams !== SUBSCRIBERS) throw new Error(`${kind}: ${connected.streams} streams open on the server, expected ${SUBSCRIBERS}`);

    // Both clocks against this process's: the error they can add to a latency.
    const offsets = [await clockOffset(server), await clockOffset(receiver)];
    const clockBoundMs = Math.max(...offsets.map((o) => Math.abs(o.offsetMs) + o.boundMs));

    const cpu0 = await cpuMs(receiver);
    const live = await postEvents(server, 0);
    await awaitDeliveries(receiver, SUBSCRIBERS * EVENTS);
    const cpu1 = await cpuMs(receiver);

    process.kill(receiver.pid, 'SIGSTOP');
    stopped = true;
    const paused = await postEvents(server, PAUSED_SEQ);
    process.kill(receiver.pid, 'SIGCONT');
    stopped = false;
    await awaitDeliveries(receiver, SUBSCRIBERS * EVENTS * 2);

    const stats = await receiver.call<GroupStats>('stats', GROUP);
    const serverStats = await server.call<ServerStats>('stats');
    await receiver.call('close', GROUP);

    // Every subscriber got every event, live and paused, exactly once.
    if (stats.closedEarly > 0 || stats.minEvents !== 2 * EVENTS || stats.maxEvents !== 2 * EVENTS) {
      throw new Error(`${kind}: subscribers got ${stats.minEvents} to ${stats.maxEvents} events of ${2 * EVENTS}; ${stats.closedEarly} streams closed early`);
    }
    const liveSeqs = stats.seqs.filter((s) => s.seq < PAUSED_SEQ);
    if (liveSeqs.length !== EVENTS || liveSeqs.some((s) => s.n !== SUBSCRIBERS)) throw new Error(`${kind}: an event missed some subscribers`);
    return {
      kind,
      before,
      after,
      sockMemDeltaBytes: sockBefore && sockAfter ? sockAfter.memBytes - sockBefore.memBytes : undefined,
      openMs,
      live,
      paused,
      latencies: liveSeqs.flatMap((s) => s.latencies),
      lastMs: liveSeqs.map((s) => s.last - s.sentAt),
      receiverCpuUs: ((cpu1 - cpu0) * 1000) / (SUBSCRIBERS * EVENTS),
      server: serverStats,
      clockBoundMs,
      frameBytes: Buffer.byteLength(`${stats.lastData ?? ''}\n\n`) + ID_LINE_BYTES,
    };
  } finally {
    if (stopped) process.kill(receiver.pid, 'SIGCONT');
    await receiver.call('close', 'warm').catch(() => undefined);
    await receiver.call('close', GROUP).catch(() => undefined);
    await server.stop();
  }
}

/** Fails the run when a child could not raise its open-file limit far enough for every stream. */
const checkOpenFiles = (who: string, child: Child) => checkChildFiles(NAME, who, child, FILES_NEEDED, SUBSCRIBERS);

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (n: number) => n.toFixed(1);
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const label = (k: ServerKind) => (k === 'muster' ? 'Muster' : 'baseline (`node:http`)');

function report(phases: Phase[], loadStart: number, host: Limits, childFiles: number | undefined): string {
  const of = (kind: ServerKind) => phases.filter((p) => p.kind === kind);
  const perSub = (kind: ServerKind, field: keyof Memory) => median(of(kind).map((p) => (p.after[field] - p.before[field]) / SUBSCRIBERS));
  const memoryRow = (kind: ServerKind) => {
    const rounds = of(kind)
      .map((p) => kb((p.after.rss - p.before.rss) / SUBSCRIBERS))
      .join(', ');
    const before = median(of(kind).map((p) => p.before.rss));
    const after = median(of(kind).map((p) => p.after.rss));
    return `| ${label(kind)} | ${mb(before)} | ${mb(after)} | **${kb(perSub(kind, 'rss'))}** | ${kb(perSub(kind, 'heapTotal'))} | ${kb(perSub(kind, 'heapUsed'))} | ${rounds} |`;
  };

  const latencies = (kind: ServerKind) => distribution(of(kind).flatMap((p) => p.latencies));
  const latencyRow = (kind: ServerKind) => {
    const d = latencies(kind);
    const rounds = of(kind)
      .map((p) => ms(distribution(p.latencies).p99))
      .join(', ');
    return `| ${label(kind)} | ${int(d.n)} | ${ms(d.p50)} | ${ms(d.p95)} | **${ms(d.p99)}** | ${ms(d.max)} | ${rounds} |`;
  };

  // Server-side steps, per event: median and max over the events of all rounds.
  type Which = 'live' | 'paused';
  const steps = (kind: ServerKind, which: Which, f: (p: Posted) => number) => distribution(of(kind).flatMap((p) => p[which].map(f)));
  const cell = (d: Distribution) => `${ms(d.p50)} / ${ms(d.max)}`;
  const stepRow = (name: string, f: (p: Posted) => number, musterOnly = false) =>
    `| ${name} | ${cell(steps('muster', 'live', f))} | ${musterOnly ? '-' : cell(steps('baseline', 'live', f))} | ${cell(steps('muster', 'paused', f))} | ${musterOnly ? '-' : cell(steps('baseline', 'paused', f))} |`;
  const last = (kind: ServerKind) => distribution(of(kind).flatMap((p) => p.lastMs));
  const inKernel = (kind: ServerKind, which: Which) => steps(kind, which, (p) => p.flushedMs);
  const flush = (kind: ServerKind, which: Which) => steps(kind, which, (p) => p.flushedMs - p.dispatchEndMs);
  const gc = (kind: ServerKind) => distribution(of(kind).flatMap((p) => [...p.live, ...p.paused].map((q) => q.gcMs)));

  const must = latencies('muster');
  const base = latencies('baseline');
  const musterRss = perSub('muster', 'rss');
  const memMet = musterRss <= GOAL_BYTES_PER_SUBSCRIBER;
  const ratio = must.p99 / base.p99;
  const latMet = ratio <= GOAL_P99_RATIO;
  const cpu = median(phases.map((p) => p.receiverCpuUs));
  const clock = Math.max(...phases.map((p) => p.clockBoundMs));
  const sock = phases.map((p) => p.sockMemDeltaBytes).filter((b): b is number => b !== undefined);
  const openRate = (kind: ServerKind) => median(of(kind).map((p) => SUBSCRIBERS / (p.openMs / 1000)));
  const maxBuffered = Math.max(...of('muster').map((p) => p.server.maxBufferedSeen));
  const dropped = of('muster').reduce((n, p) => n + p.server.dropped, 0);
  const frameBytes = (kind: ServerKind) => of(kind)[0]?.frameBytes ?? 0;
  const pausedFlushUs = (kind: ServerKind) => (flush(kind, 'paused').p50 * 1000) / SUBSCRIBERS;
  const N = int(SUBSCRIBERS);

  return [
    `## Fan-out: one event to ${N} SSE subscribers`,
    '',
    `Measured: ${N} streams of \`GET /v1/signals/stream\` open on one server process, all authenticated with the same live`,
    `API key (one user, one org), then ${EVENTS} \`note\` signals posted ${SPACING_MS} ms apart, each delivered to every stream. Each server runs`,
    'alone in a fresh child process started with `--expose-gc`, so its memory is its own; the subscribers are one other',
    'process of plain `net` sockets with a minimal SSE reader; the benchmark process only orchestrates. The baseline is a bare',
    '`node:http` server (no framework, no auth, no database) answering the stream with the same headers and `connected` frame,',
    `and writing a frame of the same shape and size (the note record as Muster sends it: ${frameBytes('muster')} bytes from Muster, ${frameBytes('baseline')} from`,
    `the baseline), serialised once for all streams. ${ROUNDS} rounds alternating baseline and Muster, a fresh server process each.`,
    '',
    '### Memory per idle subscriber',
    '',
    `Server \`process.memoryUsage()\` after three forced GCs: before opening the streams (after ${WARMUP_STREAMS} streams were opened and`,
    `closed, so that code run for the first time is not charged to the subscribers), and after all ${N} had their \`connected\``,
    `event and sat idle for ${IDLE_MS / 1000} s. Per subscriber = difference / ${N}; medians over the rounds.`,
    '',
    `| Server | RSS before | RSS with ${N} streams | RSS per subscriber | heapTotal per subscriber | heapUsed per subscriber | RSS per subscriber, each round |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    memoryRow('baseline'),
    memoryRow('muster'),
    '',
    `Goal (#19): at most 10 KB per idle subscriber. Measured: ${kb(musterRss)} of RSS, **${memMet ? 'met' : 'not met'}**.`,
    '',
    `The JS heap (heapUsed) is the part to compare: ${kb(perSub('baseline', 'heapUsed'))} per stream is what \`node:http\` itself keeps (socket, parser,`,
    `\`IncomingMessage\`, \`ServerResponse\`), and Muster adds ${kb(perSub('muster', 'heapUsed') - perSub('baseline', 'heapUsed'))}: the hub's subscriber record with its audience (a \`Set\` of org`,
    "ids) and credential, the `close` listener and the stream-slot release, and the request's parsed headers (read by the auth hook).",
    "Fastify's request, reply and child logger are not kept: the stream drops Fastify's `finish` listener, which held them for the life",
    "of the response and never runs for a stream (it ends by `destroy()`); nor is node's header map of the sent head, and the head is",
    'kept as one flat string (events/sse.ts). RSS adds native memory (libuv handles, parser state) and',
    "the slack of the heap and of malloc, which depends on where a process starts: Muster's starts big, with memory freed after",
    "loading and migrating that is handed out again; the bare server starts small and grows its heap (heapTotal) in bigger",
    "steps than it fills it. So RSS per subscriber is the figure held against the goal, but not a fair comparison of the two.",
    `Kernel socket buffers are not in RSS; idle sockets hold almost none: the kernel's TCP buffer memory (\`/proc/net/sockstat\`,`,
    `the whole machine, both ends of all ${N} connections) changed by ${sock.length ? sock.map((b) => `${(b / 1024).toFixed(0)} KB`).join(', ') : '(not available)'} over the rounds.`,
    'A subscriber that stops reading is another matter: it holds up to its socket send buffer in the kernel, plus up to',
    '`SSE_MAX_BUFFER_BYTES` (1 MiB) in the process before the hub drops it; that setting, not this idle figure, bounds the worst case.',
    '',
    '### Delivery latency',
    '',
    "The sender stamps `meta.sent_at = performance.timeOrigin + performance.now()` just before the POST (Muster: `app.inject`",
    "in the server's process, so the POST's own work counts: key lookup, insert, commit with fsync, then the hub's writes) or",
    "before building the frame (baseline); the subscriber process reads the same clock first thing in each socket's `data`",
    `handler. The clocks of the processes agree within ${clock.toFixed(3)} ms (worst offset plus half the round trip seen over IPC).`,
    `Percentiles over every delivery: ${EVENTS} events x ${N} subscribers x ${ROUNDS} rounds; every subscriber got every event exactly once (checked).`,
    '',
    '| Server | deliveries | p50 | p95 | p99 | max | p99, each round |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    latencyRow('baseline'),
    latencyRow('muster'),
    '',
    `Goal (#19): p99 delivery to ${N} subscribers within ${GOAL_P99_RATIO}x the bare server's p99 of the same run. Measured: ${ms(must.p99)} ms against ${ms(base.p99)} ms, ${ratio.toFixed(2)}x, **${latMet ? 'met' : 'not met'}**.`,
    '',
    'Where the time goes, from timestamps in the server process: ms after the send, median / max over the events. "Receiver',
    `stopped": ${EVENTS} more events per round posted while the subscriber process was stopped (SIGSTOP, resumed after; every frame then`,
    'arrived), so the server did not compete with its receiver for the 2 cores: its own cost.',
    '',
    '| Step | Muster | baseline | Muster, receiver stopped | baseline, receiver stopped |',
    '| --- | ---: | ---: | ---: | ---: |',
    `| server CPU (user + system) per event, all ${N} streams (load-independent) | ${cell(steps('muster', 'live', (p) => p.cpuMs))} | ${cell(steps('baseline', 'live', (p) => p.cpuMs))} | ${cell(steps('muster', 'paused', (p) => p.cpuMs))} | ${cell(steps('baseline', 'paused', (p) => p.cpuMs))} |`,
    stepRow("the POST (key lookup, orgs, insert, commit with fsync), until the hub's write loop starts", (p) => p.dispatchStartMs, true),
    stepRow(`the write loop over the ${N} streams (Muster: each write handed to the kernel in it; baseline: \`write()\` only queues)`, (p) => p.dispatchEndMs - p.dispatchStartMs),
    stepRow('after the loop, the uncorks queued by `write()`: one `writev` per socket (baseline; Muster has none left)', (p) => p.flushedMs - p.dispatchEndMs),
    stepRow('**every write handed to the kernel**', (p) => p.flushedMs),
    `| the last of the ${N} deliveries (subscriber's clock) | ${cell(last('muster'))} | ${cell(last('baseline'))} | - | - |`,
    '',
    'What limits the figures:',
    '',
    `- **One event loop writing ${N} sockets.** \`ServerResponse.write()\` on a chunked response only queues (it corks the socket and`,
    "  uncorks it on a tick of its own), so in the baseline the syscalls follow the loop, one `writev` per socket, all on the server's",
    `  one thread: ${ms(pausedFlushUs('baseline'))} µs a socket with the receiver stopped. Muster's hub corks, writes and uncorks each stream in turn,`,
    '  so each frame is handed to the kernel in the loop (the first streams get it before the last are written) and no tick is',
    '  queued per socket. Either way the cost is mostly the kernel: on loopback each send also runs the receiving side\'s TCP',
    `  processing in the sender's context. It takes Muster ${ms(inKernel('muster', 'paused').p50)} ms to hand an event to the kernel for all ${N}, against`,
    `  ${ms(inKernel('baseline', 'paused').p50)} ms for the bare server. It is paid per subscriber, so it scales with the subscribers held by one process.`,
    `- **What Muster adds** is smaller: the POST itself (median ${ms(steps('muster', 'paused', (p) => p.dispatchStartMs).p50)} ms with the receiver stopped: auth and a SQLite write`,
    `  transaction with its fsync), and per subscriber the check of its unflushed bytes before writing (the slow-client drop):`,
    `  ${maxBuffered === 0 ? 'none here, each event had gone out before the next' : `at most ${maxBuffered} here`}; ${dropped} subscribers dropped.`,
    '  The audience check is not per subscriber: the hub keeps its streams by channel, mode and org, and an event walks only its own.',
    `  GC pauses inside an event's window: Muster max ${ms(gc('muster').max)} ms, baseline max ${ms(gc('baseline').max)} ms.`,
    `- **The subscriber process, the receiving end of all ${N}.** It spent ${cpu.toFixed(1)} µs of CPU per delivery (${ms((cpu * SUBSCRIBERS) / 1000)} ms per event)`,
    '  reading one socket at a time, on the same 2 cores as the server, woken by the kernel as sockets become readable. While it runs, handing an',
    `  event to the kernel takes Muster ${ms(inKernel('muster', 'live').p50)} ms (median; max ${ms(inKernel('muster', 'live').max)}) instead of ${ms(inKernel('muster', 'paused').p50)} ms. The spread from event to event`,
    '  follows this contention (and whatever else runs on the machine), which is why p99 moves between rounds and between runs:',
    "  with 10 events a round, a round's p99 is its slowest event or two. The receiver is accounted for twice: the baseline pays exactly",
    `  the same receiver, so its latencies are the floor this machine allows (p99 ${ms(base.p99)} ms, against Muster's ${ms(must.p99)} ms); and the`,
    '  receiver-stopped columns give the server\'s own time. Real subscribers are separate machines reading one stream each,',
    "  so in production the latency is the server's part (the receiver-stopped column) plus the network, and the sends go",
    '  to a NIC instead of running the receiving TCP stack too.',
    '',
    `Opening the streams: Muster accepted ${int(openRate('muster'))} streams/s (each authenticates the key and reads the caller's orgs),`,
    `the baseline ${int(openRate('baseline'))}/s, ${OPEN_CONCURRENCY} connecting at a time.`,
    '',
    `Limits: each of the two child processes (server, subscribers) needs ${int(FILES_NEEDED)} open files (the ${N} sockets, the warm-up's ${WARMUP_STREAMS} and`,
    `${SPARE_FILES} spare); node raises its soft limit to the hard one as it starts, and a child whose hard limit`,
    `is lower is started through \`sh -c 'ulimit -n ${FILES_NEEDED}; exec node ...'\` (which needs the privilege to raise it); the run fails before`,
    `measuring when a child got fewer. Here: this process ${host.openFiles ? `soft ${host.openFiles.soft}, hard ${host.openFiles.hard}` : 'unknown'}; the children got ${childFiles === undefined ? 'unknown' : int(childFiles)}.`,
    `Ephemeral ports (\`net.ipv4.ip_local_port_range\`): ${host.ports ? `${host.ports.low}-${host.ports.high}, ${int(host.ports.high - host.ports.low + 1)} ports` : 'unknown'} for the ${N} connections to one server port from`,
    `one source address (the run fails if fewer); past ~28,000 streams the subscribers would need several source addresses (127.0.0.x).`,
    `\`net.core.somaxconn\`: ${host.somaxconn ?? 'unknown'}, above the ${OPEN_CONCURRENCY} connecting at once.`,
    '',
    `Load average (1 min) of the machine: ${loadStart.toFixed(1)} when the benchmark started, ${os.loadavg()[0]!.toFixed(1)} when it ended; other work on it moves these figures.`,
    '',
    `Machine: ${machine()} (${os.platform()} ${os.arch()}), ${Math.round(os.totalmem() / 1024 ** 3)} GB. Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench -- fanout\`.`,
  ].join('\n');
}

export async function run(): Promise<BenchResult> {
  const loadStart = os.loadavg()[0]!;
  const limits = machineLimits();
  checkMachine(NAME, limits, SUBSCRIBERS + WARMUP_STREAMS, OPEN_CONCURRENCY);
  const receiver = await forkTs(SUBSCRIBERS_SCRIPT, [], { openFiles: FILES_NEEDED });
  try {
    await clockOffset(receiver); // answered: node runs, with the limit its shell set
    checkOpenFiles('the subscriber process', receiver);
    const childFiles = openFileLimit(receiver.pid);
    const phases: Phase[] = [];
    // Alternating, so drift of the shared machine hits both.
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of ['baseline', 'muster'] as const) {
        process.stderr.write(`  round ${round + 1}, ${kind}: ${SUBSCRIBERS} streams...\n`);
        const p = await phase(kind, receiver);
        phases.push(p);
        const k = (which: 'live' | 'paused') => ms(median(p[which].map((q) => q.flushedMs)));
        process.stderr.write(
          `    p99 ${ms(distribution(p.latencies).p99)} ms; writes in the kernel after ${k('live')} ms (receiver stopped: ${k('paused')} ms); ${kb((p.after.rss - p.before.rss) / SUBSCRIBERS)} RSS a stream\n`,
        );
      }
    }
    const rssPerStream = median(phases.filter((p) => p.kind === 'muster').map((p) => (p.after.rss - p.before.rss) / SUBSCRIBERS));
    return { name: NAME, markdown: report(phases, loadStart, limits, childFiles), memory: [{ what: 'open stream (idle SSE subscriber, RSS)', config: 'SQLite', bytes: rssPerStream }] };
  } finally {
    await receiver.stop();
  }
}
