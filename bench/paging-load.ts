// The paging benchmark's other side, in a worker thread (bench/paging.bench.ts starts it): the load
// generator sending alerts, and the stand-in push service receiving the pushes. Off the thread that
// runs Muster, so that neither a request's send time nor a push's arrival time waits for Muster's
// event loop (in one thread, an alert due while Muster pages would be sent late, and its latency
// would be counted from then: the backlog would hide itself).
//
// Times are wall-clock milliseconds with a fraction (performance.timeOrigin + performance.now()),
// comparable with the timestamps Muster writes in its database (same clock, millisecond precision).
import { parentPort, workerData } from 'node:worker_threads';
import { startReceiver } from '../test/peers.js';

export interface PagingLoadData {
  tls: { key: string; cert: string };
}

export interface Sent {
  ref: string;
  /** When the request was sent. */
  at: number;
  /** How late that was after its tick (open loop): the generator's own lag. */
  late: number;
  /** When its answer ended. */
  done: number;
  status: number;
}

export interface Arrival {
  at: number;
  body: Uint8Array;
}

/** What the worker is asked, each answered with `{id, result}` or `{id, error}`: alerts at a rate, flat out, or the pushes arrived since last asked. */
export type PagingLoadCommand =
  | { cmd: 'rate'; url: string; prefix: string; rate: number; seconds: number }
  | { cmd: 'flat'; url: string; prefix: string; seconds: number; connections: number }
  | { cmd: 'arrivals' };

type PagingLoadMessage = PagingLoadCommand & { id: number };

export const now = () => performance.timeOrigin + performance.now();

/** A PagerDuty Events API v2 trigger, its dedup_key the ref: a new urgent incident for each new ref. */
export const trigger = (ref: string) =>
  JSON.stringify({ event_action: 'trigger', dedup_key: ref, payload: { summary: `Pump ${ref} stopped`, source: 'pump.example.com', severity: 'critical' } });

async function post(url: string, s: Omit<Sent, 'done' | 'status'>): Promise<Sent> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: trigger(s.ref) });
  await res.arrayBuffer();
  return { ...s, done: now(), status: res.status };
}

/** `rate` alerts a second for `seconds`, open loop: each sent on its tick, whatever the answers do. */
async function atRate(url: string, prefix: string, rate: number, seconds: number): Promise<Sent[]> {
  const inflight: Promise<Sent>[] = [];
  const start = now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const at = now();
    inflight.push(post(url, { ref: `${prefix}-${i}`, at, late: at - due }));
  }
  return Promise.all(inflight);
}

/** As fast as `connections` loops go, for `seconds`. */
async function flatOut(url: string, prefix: string, seconds: number, connections: number): Promise<Sent[]> {
  const sent: Sent[] = [];
  const end = now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (now() < end) sent.push(await post(url, { ref: `${prefix}-${n++}`, at: now(), late: 0 }));
    }),
  );
  return sent;
}

if (parentPort) {
  const port = parentPort;
  const { tls } = workerData as PagingLoadData;
  const arrivals: Arrival[] = [];
  const push = await startReceiver({ tls });
  // The push service: 201 Created, as Web Push services answer, the time taken before anything else.
  push.respond = (req) => {
    arrivals.push({ at: now(), body: new Uint8Array(req.body) });
    return { status: 201 };
  };
  port.on('message', (m: PagingLoadMessage) => {
    const reply = (p: Promise<unknown>) =>
      p.then(
        (result) => port.postMessage({ id: m.id, result }),
        (err: unknown) => port.postMessage({ id: m.id, error: String(err instanceof Error ? (err.stack ?? err.message) : err) }),
      );
    if (m.cmd === 'rate') void reply(atRate(m.url, m.prefix, m.rate, m.seconds));
    else if (m.cmd === 'flat') void reply(flatOut(m.url, m.prefix, m.seconds, m.connections));
    else void reply(Promise.resolve(arrivals.splice(0)));
  });
  port.postMessage({ ready: push.origin });
}
