// One load: a warm-up and a measured autocannon run, in a worker thread started by load() in lib.ts. The
// load generator runs off the main thread so that it does not share an event loop with the server it
// measures: in one thread every request would pay for both sides and the Muster/baseline ratio would shrink toward 1.
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

export interface LoadJob {
  url: string;
  /** GET when absent. */
  method?: 'GET' | 'POST';
  /** The same body with every request. */
  body?: string;
  headers: Record<string, string>;
  connections: number;
  /** Seconds a request may wait for its answer before it counts as an error (autocannon's 10 when absent). */
  timeoutSeconds?: number;
  /**
   * When set, each connection replaces this string in the body and in the URL's path and query with its own
   * value (connectionValues[i], else its index 0 to connections - 1), so that, say, each connection posts as its
   * own device. The requests are built once per connection.
   */
  connectionPlaceholder?: string;
  /** The value of connection i (a device token, say); the index when absent. */
  connectionValues?: string[];
  /**
   * When set, every request replaces this string in the body and in the URL's path and query with the next of
   * sequenceValues, taken in turn over all connections (request n of the load sends value (start + n) modulo
   * their count; the warm-up and the measured run continue one sequence, from sequenceStart, else from a random
   * start so that short loads do not repeat the first values only). The request is built anew for each request, so that, say,
   * the load rotates through thousands of devices. Replaced before connectionPlaceholder, so a value may
   * hold that placeholder too.
   */
  sequencePlaceholder?: string;
  sequenceValues?: string[];
  /** The sequence's first index (a later load continuing where one stopped); random when absent. */
  sequenceStart?: number;
  warmupSeconds: number;
  seconds: number;
}

export interface LoadSummary {
  requestsPerSec: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
  /** Answers by status code, so that a failed check can say what came back instead. */
  statuses: Record<string, number>;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/**
 * The fields used of autocannon's result. In a worker thread autocannon hands back its raw,
 * unaggregated result (its types describe the aggregated one), whose per-second histogram is encoded:
 * the mean rate is therefore taken as completed requests over the run's duration.
 */
interface RawResult {
  totalCompletedRequests: number;
  duration: number;
  errors: number;
  non2xx: number;
}

/** The next index of a load's sequence (sequencePlaceholder), shared by its connections and its two runs. */
export type Sequence = () => number;

/** Request n's sequence index from n = 0: start, start + 1, ... modulo count. */
export function sequenceFrom(start: number, count: number): Sequence {
  let n = start;
  return () => {
    const i = n % count;
    n = i + 1;
    return i;
  };
}

function runOnce(job: LoadJob, seconds: number, sequence?: Sequence): Promise<LoadSummary> {
  // autocannon's own latency histogram has 1 ms resolution and no p95, too coarse for sub-millisecond
  // answers, so every response time (a float in ms, from process.hrtime) is kept and sorted here.
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const options: autocannon.Options = {
    url: job.url,
    method: job.method ?? 'GET',
    body: job.body,
    headers: job.headers,
    connections: job.connections,
    duration: seconds,
    // autocannon checks for the end of a run on its sample tick (1 s by default), so a shorter run
    // (quick mode's) would last the whole second: tick at the run's length when it is under one.
    sampleInt: Math.min(1_000, seconds * 1_000),
    ...(job.timeoutSeconds === undefined ? {} : { timeout: job.timeoutSeconds }),
  };
  const { connectionPlaceholder: placeholder, connectionValues: values, body, sequencePlaceholder: seq, sequenceValues: seqValues } = job;
  if (placeholder !== undefined || seq !== undefined) {
    const url = new URL(job.url);
    const path = `${url.pathname}${url.search}`;
    const perPath = (placeholder !== undefined && path.includes(placeholder)) || (seq !== undefined && path.includes(seq));
    let next = 0; // autocannon builds its clients in order, so connection i gets value i in every run
    options.setupClient = (client) => {
      const value = values?.[next] ?? String(next);
      next++;
      const own = (text: string) => (placeholder === undefined ? text : text.replaceAll(placeholder, value));
      if (seq === undefined || seqValues === undefined || sequence === undefined) {
        client.setRequests([{ ...(body !== undefined ? { body: own(body) } : {}), ...(perPath ? { path: own(path) } : {}) }]);
        return;
      }
      // Built for every request (autocannon calls setupRequest before each one): the next value of the sequence.
      client.setRequests([
        {
          setupRequest: (req) => {
            const v = seqValues[sequence()]!;
            if (body !== undefined) req.body = own(body.replaceAll(seq, v));
            if (perPath) req.path = own(path.replaceAll(seq, v));
            return req;
          },
        },
      ]);
    };
  }
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      options,
      (err: unknown, result) => {
        if (err) {
          reject(err instanceof Error ? err : new Error('autocannon failed', { cause: err }));
          return;
        }
        const raw = result as unknown as RawResult;
        const sorted = Float64Array.from(latencies).sort();
        resolve({
          requestsPerSec: raw.duration > 0 ? raw.totalCompletedRequests / raw.duration : 0,
          p50: percentile(sorted, 50),
          p95: percentile(sorted, 95),
          p99: percentile(sorted, 99),
          errors: raw.errors,
          non2xx: raw.non2xx,
          total: raw.totalCompletedRequests,
          statuses,
        });
      },
    );
    instance.on('response', (_client, status, _bytes, responseTime) => {
      latencies.push(responseTime);
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
}

/** The warm-up and the measured run, in one thread so the warm-up also warms the generator's JIT. */
async function warmThenRun(job: LoadJob): Promise<{ warmup: LoadSummary; run: LoadSummary }> {
  const count = job.sequenceValues?.length ?? 0;
  const sequence = count > 0 ? sequenceFrom((job.sequenceStart ?? Math.floor(Math.random() * count)) % count, count) : undefined;
  const warmup = await runOnce(job, job.warmupSeconds, sequence);
  return { warmup, run: await runOnce(job, job.seconds, sequence) };
}

if (parentPort) {
  const port = parentPort;
  warmThenRun(workerData as LoadJob).then(
    (result) => port.postMessage(result),
    (err: unknown) => {
      throw err; // surfaces as the worker's 'error' event in load()
    },
  );
}
