// Per-request cost of the incident paths, independent of machine load: CPU microseconds of the
// server process (process.cpuUsage) and SQL statements (onQuery) per request, over N requests sent
// by a separate load process (10 keep-alive connections), with an optional CPU profile of the
// measured requests only (node:inspector) and its top self-time frames.
//
//   npx tsx bench/profile-incidents.ts [--rows 200000] [--n 2000] [--prof DIR] [--pg] [list|list-priority|list-sla|create|events ...]
//
// --pg: Muster on PostgreSQL (TEST_DATABASE_URL or the machine's, a schema of its own dropped at the end, the
// history analysed, as write-limit does), without Redis; --timing is SQLite's only.
//
// list: GET /v1/tickets?limit=50; list-priority and list-sla: the same with sort=priority or sort=sla_due;
// create: POST /v1/tickets; events: an Events API trigger with a new dedup_key (a new incident each).
//
// Not a benchmark of the registry (bench/run.ts): a tool for the profile notes of docs/benchmarks.md.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { caller, seed, seedPg } from './incidents.bench.js';
import { PG_URL } from './pg-redis.js';
import { benchEnv } from './lib.js';

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args.splice(i, 2)[1]! : def;
};
const ROWS = Number(opt('rows', '200000'));
const N = Number(opt('n', '2000'));
const PROF = opt('prof', '');
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};
const TIMING = flag('timing');
const PG = flag('pg');
const paths = args.length ? args : ['list', 'create'];

// The load: N requests over 10 keep-alive connections, in its own process so its CPU is not counted.
const CLIENT = `
import http from 'node:http';
const [url, method, body, headers, n] = JSON.parse(process.argv[1]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
let sent = 0, bad = 0;
const u = new URL(url);
// '@N@' in the body: a number of its own per request (the Events API's dedup_key: a new incident each).
const run = process.pid + '-' + Date.now();
function one() {
  return new Promise((resolve) => {
    const req = http.request({ agent, host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers }, (res) => {
      if (res.statusCode >= 300) bad++;
      res.resume(); res.on('end', resolve);
    });
    req.end(body === null ? undefined : body.replace('@N@', run + '-' + sent));
  });
}
async function conn() { while (sent < n) { sent++; await one(); } }
await Promise.all(Array.from({ length: 10 }, conn));
process.stdout.write(JSON.stringify({ bad }));
`;

function drive(url: string, method: string, body: string | null, headers: Record<string, string>, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CLIENT, JSON.stringify([url, method, body, headers, n])], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const r = JSON.parse(out || '{"bad":-1}') as { bad: number };
      if (code !== 0 || r.bad !== 0) reject(new Error(`load of ${method} ${url}: exit ${code}, ${r.bad} non-2xx answers`));
      else resolve();
    });
  });
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
}

function topFrames(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }, k = 15): string[] {
  const self = new Map<string, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let total = 0;
  profile.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const f = n.callFrame;
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

// --timing: CPU time of each statement's execution inside better-sqlite3 (process.cpuUsage around it), by its SQL.
const timing = new Map<string, number>();
if (TIMING) {
  const stmtProto = Object.getPrototypeOf(new SQLite(':memory:').prepare('select 1')) as Record<string, (...a: unknown[]) => unknown>;
  for (const m of ['run', 'all', 'get'] as const) {
    const orig = stmtProto[m]!;
    stmtProto[m] = function (this: { source: string }, ...a: unknown[]) {
      const t = process.cpuUsage();
      try {
        return orig.apply(this, a);
      } finally {
        const d = process.cpuUsage(t);
        const k = this.source.replace(/\s+/g, ' ').slice(0, 60);
        timing.set(k, (timing.get(k) ?? 0) + (d.user + d.system) / 1000);
      }
    };
  }
}

/** A PagerDuty Events API v2 trigger whose dedup_key the load numbers ('@N@'). */
const TRIGGER = {
  event_action: 'trigger',
  dedup_key: 'prof-@N@',
  payload: { summary: 'Disk 95% full on db-1', source: 'db-1.example.com', severity: 'critical', component: 'postgres', custom_details: { free: '5%' } },
};

/** A new integration's Events API URL on this server. */
async function eventsUrl(app: Awaited<ReturnType<typeof buildApp>>, base: string, headers: Record<string, string>): Promise<string> {
  const r = await app.inject({ method: 'POST', url: '/v1/integrations', headers, payload: { name: 'profile' } });
  if (r.statusCode !== 201) throw new Error(`POST /v1/integrations: ${r.statusCode} ${r.body}`);
  return base + new URL(r.json<{ events_url: string }>().events_url).pathname;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-prof-'));
const schema = `profile_incidents_${randomBytes(4).toString('hex')}`;
let statements = 0;
/** Statements that travelled in the round trip of the one after them (PostgreSQL, src/db/pipeline.ts). */
let carried = 0;
const kinds = new Map<string, number>();
try {
  const config = loadConfig(benchEnv(dataDir, PG ? { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema } : {}));
  const ctx = await createContext(config, {
    onQuery: (sql, _params, _ms, withNext) => {
      statements++;
      if (withNext) carried++;
      const k = sql.replace(/\s+/g, ' ').slice(0, 70);
      kinds.set(k, (kinds.get(k) ?? 0) + 1);
    },
  });
  const app = await buildApp(ctx);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const c = await caller(app);
  if (ROWS > 0 && PG) {
    await seedPg(schema, c, ROWS);
    await sql`analyze incident_events, integration_events, outbox`.execute(ctx.db);
  } else if (ROWS > 0) seed(path.join(dataDir, 'muster.db'), c, ROWS);
  const headers = { 'x-api-key': c.key, 'content-type': 'application/json' };
  const session = new Session();
  session.connect();
  for (const p of paths) {
    const sort = p === 'list-priority' ? '&sort=priority' : p === 'list-sla' ? '&sort=sla_due' : '';
    const [method, target, body] = p.startsWith('list')
      ? ['GET', `${url}/v1/tickets?limit=50${sort}`, null]
      : p === 'events'
        ? ['POST', await eventsUrl(app, url, headers), JSON.stringify(TRIGGER)]
        : ['POST', `${url}/v1/tickets`, JSON.stringify({ title: 'Pump station 4: pressure low', priority: 'high' })];
    await drive(target, method, body, headers, Math.min(300, N)); // warm-up
    statements = 0;
    carried = 0;
    kinds.clear();
    timing.clear();
    if (PROF) {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
      await session.post('Profiler.start');
    }
    // In batches of 250: on a loaded machine the CPU time of a request swings with its neighbours, so
    // the median and the lowest batch are reported beside the mean.
    const BATCH = 250;
    const perBatch: number[] = [];
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let done = 0; done < N; done += BATCH) {
      const b0 = process.cpuUsage();
      await drive(target, method, body, headers, Math.min(BATCH, N - done));
      const b = process.cpuUsage(b0);
      perBatch.push((b.user + b.system) / Math.min(BATCH, N - done));
    }
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    perBatch.sort((a, b) => a - b);
    const med = perBatch[perBatch.length >> 1]!;
    console.log(
      `${p}: ${N} requests, ${((cpu.user + cpu.system) / N).toFixed(0)} us CPU each (batches of ${BATCH}: median ${med.toFixed(0)}, lowest ${perBatch[0]!.toFixed(0)}), ${(statements / N).toFixed(2)} statements each${PG ? ` in ${((statements - carried) / N).toFixed(2)} round trips` : ''}, ${((N / wall) * 1000).toFixed(0)} req/s wall (load ${os.loadavg()[0]!.toFixed(1)})`,
    );
    for (const [k, n] of [...kinds.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`   ${(n / N).toFixed(2)}  ${k}`);
    for (const [k, v] of [...timing.entries()].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`   ${((v * 1000) / N).toFixed(0).padStart(5)} us  ${k}`);
    if (PROF) {
      const { profile } = await session.post('Profiler.stop');
      fs.mkdirSync(PROF, { recursive: true });
      fs.writeFileSync(path.join(PROF, `${p}.cpuprofile`), JSON.stringify(profile));
      console.log(topFrames(profile as never).map((l) => `   ${l}`).join('\n'));
    }
  }
  session.disconnect();
  await app.close();
  if (PG) await sql.raw(`drop schema ${schema} cascade`).execute(ctx.db);
  await ctx.close();
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
