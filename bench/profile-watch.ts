// Where the position observers' cost goes on the beacon path: sets up Muster as bench/beacons-watch.bench.ts's
// "on" (or "off" with --off), primes every device, then
// 1. times each observer alone, called directly with the load's fixes (CPU microseconds per fix; no HTTP), and
//    the track's flush per position (the benchmark's observerCosts);
// 2. loads POST /v1/signals for --seconds (the load in a worker thread, as the benchmark does) while a CPU
//    profile of the server's thread runs, and prints the server's CPU per beacon, SQL statements per beacon,
//    and the top self-time frames (--prof DIR also writes the .cpuprofile).
//
//   npx tsx bench/profile-watch.ts [--off] [--seconds 5] [--prof DIR]
//
// Not a benchmark of the registry (bench/run.ts): a tool for the notes of the beacons-watch section.
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { BODY, DEVICES, FIX, makeFixes, makeHomes, makeSites, observerCosts, settled, startSubject, switchOn } from './beacons-watch.bench.js';
import { load, numberOption } from './lib.js';

const OFF = process.argv.includes('--off');
const SECONDS = numberOption('seconds', 5);
const profIndex = process.argv.indexOf('--prof');
const PROF = profIndex >= 0 ? process.argv[profIndex + 1] : undefined;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

function topFrames(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }, k = 25): string[] {
  const self = new Map<string, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let total = 0;
  profile.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame;
    const file = f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/');
    const key = `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`);
}

// Statements run, by their SQL, while `counting`.
const statements = new Map<string, number>();
let counting = false;
const probe = new SQLite(':memory:');
const stmtProto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...a: unknown[]) => unknown>;
probe.close();
for (const m of ['run', 'all', 'get'] as const) {
  const orig = stmtProto[m]!;
  stmtProto[m] = function (this: { source: string }, ...a: unknown[]) {
    if (counting) {
      const k = this.source.replace(/\s+/g, ' ').slice(0, 90);
      statements.set(k, (statements.get(k) ?? 0) + 1);
    }
    return orig.apply(this, a);
  };
}

const homes = makeHomes();
const fixes = makeFixes(homes);
const s = await startSubject(homes);
try {
  if (!OFF) await switchOn(s, makeSites());
  const opts = { method: 'POST' as const, body: BODY, sequencePlaceholder: FIX, sequenceValues: fixes, url: `${s.muster.url}/v1/signals`, headers: { 'x-api-key': s.key } };
  await load({ ...opts, seconds: Math.ceil(DEVICES / 1_000) });
  await settled(s.muster);

  // 1. Each observer alone, with fixes as the beacon path hands them over.
  if (!OFF) {
    const c = await observerCosts(s, fixes);
    console.log(`us per fix: arrival ${c.arrival.toFixed(2)}, sites ${c.sites.toFixed(2)}, tracks ${c.tracks.toFixed(2)} (CPU); the track's flush ${c.flush.toFixed(2)} (wall, batches of 3,000), its move ${c.move.toFixed(2)} (wall)`);
  }

  // 2. The beacon path under load, profiled.
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  counting = true;
  const c0 = process.cpuUsage();
  const r = await load({ ...opts, seconds: SECONDS });
  const cpu = process.cpuUsage(c0);
  counting = false;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  console.log(`\n${OFF ? 'off' : 'on'}: ${r.completed} beacons (warm-up included), ${r.requestsPerSec.toFixed(0)} req/s measured, ${((cpu.user + cpu.system) / r.completed).toFixed(0)} us server CPU per beacon (load ${os.loadavg()[0]!.toFixed(1)})`);
  for (const [k, n] of [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`   ${String(n).padStart(7)} (${(n / r.completed).toFixed(3)} per beacon)  ${k}`);
  if (PROF) {
    fs.mkdirSync(PROF, { recursive: true });
    fs.writeFileSync(path.join(PROF, `watch-${OFF ? 'off' : 'on'}.cpuprofile`), JSON.stringify(profile));
  }
  console.log(topFrames(profile as never).map((l) => `   ${l}`).join('\n'));
} finally {
  await s.muster.close();
}
