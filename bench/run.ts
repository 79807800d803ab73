// `npm run bench [-- [--quick] [NAME]]`: runs the benchmarks in sequence and prints their sections.
//
// Full run (no --quick): writes docs/benchmarks.md, but only when every selected benchmark passed.
// With NAME only the benchmarks whose name contains NAME run, and only their sections of the file are
// replaced; the others are kept as they were.
//
// Quick mode (--quick, run by .ci/run): every benchmark (or those matching NAME) with short runs and
// small data, to prove that each still runs and that its answers check out. It never writes
// docs/benchmarks.md: figures in the docs come only from full runs. It fails (exit 1) when a
// benchmark throws or times out, never because a figure is low.
//
// Adding a benchmark:
// - Write bench/NAME.bench.ts exporting `run(): Promise<BenchResult>` whose result is named NAME,
//   import it below and list it in BENCHMARKS (a file not listed fails every run, quick ones too).
// - Start Muster with lib's startMuster (never a configuration of your own: it carries the
//   benchmarks' settings, such as rate limits out of reach).
// - Size it with lib's `sized(full, quick)` (rows, subscribers, events...), and let load() and
//   compare() take their durations and rounds from lib (RUN_SECONDS, ROUNDS); `QUICK` tells the mode.
//   Keep a quick run of your benchmark within ~30 s on a 2-core machine.
// - Check every answer: load() and compare() throw on any error or non-2xx answer; check the rest
//   yourself (other status codes, rows written, events delivered) and throw when it is off, so a
//   broken setup never yields a figure.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as authMe from './auth-me.bench.js';
import * as beacons from './beacons.bench.js';
import * as beaconsRedis from './beacons-redis.bench.js';
import * as beaconsWatch from './beacons-watch.bench.js';
import * as coldStart from './cold-start.bench.js';
import * as fanout from './fanout.bench.js';
import * as fanoutCluster from './fanout-cluster.bench.js';
import * as incidents from './incidents.bench.js';
import * as metricsCost from './metrics-cost.bench.js';
import * as eventsApi from './events-api.bench.js';
import * as scheduling from './scheduling.bench.js';
import { checkRegistry, parseArgs, runBenchmarks, type Benchmark } from './runner.js';
import * as trackers from './trackers.bench.js';
import * as responders from './responders.bench.js';
import * as oncall from './oncall.bench.js';
import * as paging from './paging.bench.js';
import * as reports from './reports.bench.js';
import * as writeLimit from './write-limit.bench.js';

/** Every benchmark, in the order of the file. A new one is imported above and listed here. */
const BENCHMARKS: Benchmark[] = [
  { name: 'auth-me', run: authMe.run },
  { name: 'incidents', run: incidents.run },
  { name: 'beacons', run: beacons.run },
  { name: 'beacons-redis', run: beaconsRedis.run },
  { name: 'beacons-watch', run: beaconsWatch.run },
  { name: 'fanout', run: fanout.run },
  { name: 'fanout-cluster', run: fanoutCluster.run },
  { name: 'scheduling', run: scheduling.run },
  { name: 'trackers', run: trackers.run },
  { name: 'responders', run: responders.run },
  { name: 'events-api', run: eventsApi.run },
  { name: 'metrics-cost', run: metricsCost.run },
  { name: 'oncall', run: oncall.run },
  { name: 'paging', run: paging.run },
  { name: 'reports', run: reports.run },
  { name: 'cold-start', run: coldStart.run },
  { name: 'write-limit', run: writeLimit.run },
];

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));

let code = 1;
try {
  const { quick, filter } = parseArgs(process.argv.slice(2));
  checkRegistry(BENCH_DIR, BENCHMARKS.map((b) => b.name));
  code = await runBenchmarks({
    benchmarks: BENCHMARKS,
    quick,
    filter,
    output: path.join(BENCH_DIR, '..', 'docs', 'benchmarks.md'),
    // Generous: a hang, not a slow machine, should trip it (a full incidents run seeds a million rows).
    timeoutMs: (quick ? 3 : 30) * 60_000,
  });
} catch (err) {
  console.error(err);
}
// Exit explicitly: a server, worker or child a failed benchmark left open must not keep the run alive.
process.exit(code);
