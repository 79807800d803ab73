// Where GET /v1/orgs/:org_slug/on-call spends its CPU: the oncall benchmark's org (200 schedules of 3
// layers, bench/oncall.bench.ts), then N requests through app.inject (no socket: the handler's work and
// Fastify's), CPU µs per request from process.cpuUsage(), and with --profile a .cpuprofile of those
// requests with its self time summed by source file.
//
//   npx tsx bench/profile-oncall.ts [--n 300] [--schedules 200] [--pg] [--profile /tmp/prof]
//
// --pg: Muster on PostgreSQL with Redis (bench/pg-redis.ts), its schema dropped at the end.
// Not a benchmark of the registry (bench/run.ts): a tool for the notes of the oncall section.
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { liveKey, numberOption, startMuster, type MusterServer } from './lib.js';
import { seedMembers, seedSchedules } from './oncall.bench.js';
import { pgRedis, startPgRedisMuster, type PgRedis } from './pg-redis.js';

const N = numberOption('n', 300);
const SCHEDULES = numberOption('schedules', 200);
const args = process.argv.slice(2);
const profileDir = args.includes('--profile') ? args[args.indexOf('--profile') + 1] : undefined;

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}

/** Self time by file (and the top functions), from a .cpuprofile's samples. */
function summarise(profile: { nodes: Node[]; samples: number[]; timeDeltas: number[] }): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const files = new Map<string, number>();
  const fns = new Map<string, number>();
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    const file = f.url.replace(/^.*\/(src|node_modules)\//, '$1/') || `(${f.functionName || 'native'})`;
    files.set(file, (files.get(file) ?? 0) + us);
    const fn = `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
  }
  const top = (m: Map<string, number>, k: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, us]) => `  ${((us / total) * 100).toFixed(1).padStart(5)} %  ${name}`);
  return ['self time by file:', ...top(files, 20), 'top functions:', ...top(fns, 25)];
}

let pgr: PgRedis | undefined;
let muster: MusterServer | undefined;
try {
  if (args.includes('--pg')) {
    pgr = await pgRedis('profile_oncall');
    muster = await startPgRedisMuster(pgr);
  } else {
    muster = await startMuster();
  }
  const headers = { 'x-api-key': await liveKey(muster.app) };
  const org = (await muster.app.inject({ url: '/v1/orgs', headers })).json<{ orgs: { id: number; slug: string; primary: boolean }[] }>().orgs.find((o) => o.primary)!;
  const users = await seedMembers(muster.ctx.db, org.id);
  await seedSchedules(muster, headers, org.slug, users, SCHEDULES);
  const url = `/v1/orgs/${org.slug}/on-call`;
  const get = async () => {
    const res = await muster!.app.inject({ url, headers });
    if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
  };
  for (let i = 0; i < 30; i++) await get();
  const session = profileDir ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
  }
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await get();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  console.log(`${SCHEDULES} schedules, ${N} requests: ${((c.user + c.system) / N).toFixed(0)} CPU µs/request (user ${(c.user / N).toFixed(0)}, system ${(c.system / N).toFixed(0)}), ${(wall / N).toFixed(2)} ms wall each`);
  if (session && profileDir) {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(profileDir, { recursive: true });
    const file = path.join(profileDir, `oncall${pgr ? '-pg' : ''}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    console.log(`profile: ${file}`);
    console.log(summarise(profile as unknown as { nodes: Node[]; samples: number[]; timeDeltas: number[] }).join('\n'));
  }
} finally {
  await muster?.close();
  await pgr?.drop();
}
