// Cold start (issue #40): from `node dist/server.js` to the first 200 of GET /readyz, as a child
// process of its own, on SQLite and on PostgreSQL: empty (first start, migrations run; then restarts)
// and seeded with 1,000,000 incidents and 10,000 tracker devices, each with an active beacon state
// (restarts of a migrated database). The rows are written straight into the database, as
// incidents.bench.ts and reports.bench.ts do. The web bundle is not needed: without dist/web the
// pages answer 503 and /readyz is unaffected (src/modules/web/web.routes.ts).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { col, pgBulkWriter, sqliteBulkWriter, dropPgSchemas, type BulkWriter } from './bulk-writer.js';
import { benchEnv, machine, median, QUICK, sized, type BenchResult } from './lib.js';

const NAME = 'cold-start';
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const INCIDENTS = sized(1_000_000, 10_000);
const DEVICES = sized(10_000, 1_000);
/** Users the devices belong to (100 devices each in a full run). */
const USERS = 100;
const REPS = sized(5, 1);
/** Runs of the timed steps (phases()) per database. */
const PHASE_REPS = sized(3, 1);
/** The issue's goal: /readyz answers 200 within this many ms of the spawn. */
const GOAL_MS = 2_000;
/** A start that takes this long has hung. */
const START_TIMEOUT_MS = 60_000;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = path.join(ROOT, 'dist', 'server.js');

type Engine = 'SQLite' | 'PostgreSQL';

// ---------------------------------------------------------------------------------------------
// The build.

/** The newest modification time of the files under `dir` whose name passes `keep`. */
function newestMtime(dir: string, keep: (name: string) => boolean): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p, keep));
    else if (keep(entry.name)) newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds the server (`npm run build:server`) when dist/server.js is missing or older than a file of src/. */
function ensureBuilt(): void {
  const src = newestMtime(path.join(ROOT, 'src'), (n) => n.endsWith('.ts') && !n.endsWith('.test.ts'));
  if (fs.existsSync(SERVER) && newestMtime(path.join(ROOT, 'dist'), (n) => n.endsWith('.js')) >= src) return;
  process.stderr.write('  building the server (npm run build:server)...\n');
  execFileSync('npm', ['run', 'build:server'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

// ---------------------------------------------------------------------------------------------
// One start.

interface Start {
  /** From spawn to the first 200 of /readyz. */
  readyMs: number;
  /** The child's CPU time (user + system) at that moment, in 10 ms ticks. */
  cpuMs: number;
  /** Its resident set then. */
  rssMb: number;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The status of GET url, or 0 when nothing answers (yet). One connection per try: no pool. */
function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(0));
  });
}

function procStat(pid: number): { cpuMs: number; rssMb: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const statusText = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(statusText)?.[1] ?? Number.NaN);
  // utime and stime, in clock ticks of 10 ms (USER_HZ 100 on Linux).
  return { cpuMs: (Number(f[11]) + Number(f[12])) * 10, rssMb: rssKb / 1024 };
}

/**
 * Spawns `node dist/server.js` with the benchmarks' environment (benchEnv) on `env`, polls /readyz
 * every 5 ms until it answers 200, reads the child's CPU time and RSS, then `whileUp` (the setup's
 * registration, or reading what the server has printed), then stops it with SIGTERM and checks that it stopped cleanly.
 */
async function startOnce(dataDir: string, env: Record<string, string>, opts: { whileUp?: (url: string, out: () => string) => Promise<void> } = {}): Promise<Start> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const childEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    ...benchEnv(dataDir, { ...env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url }),
  };
  const t0 = performance.now();
  const child = spawn(process.execPath, [SERVER], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  let exited: number | null | undefined;
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve((exited = code))));
  try {
    for (;;) {
      if (exited !== undefined) throw new Error(`the server exited (code ${exited}) before /readyz answered 200:\n${err}${out}`);
      if (performance.now() - t0 > START_TIMEOUT_MS) throw new Error(`/readyz not 200 within ${START_TIMEOUT_MS} ms`);
      if ((await status(`${url}/readyz`)) === 200) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const readyMs = performance.now() - t0;
    const { cpuMs, rssMb } = procStat(child.pid!);
    await opts.whileUp?.(url, () => out);
    child.kill('SIGTERM');
    const code = await exit;
    if (code !== 0) throw new Error(`the server stopped with code ${code}:\n${err}`);
    return { readyMs, cpuMs, rssMb };
  } finally {
    if (exited === undefined) {
      child.kill('SIGKILL');
      await exit;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Where a start's time goes: the steps of src/server.ts, timed inside a child of their own.

/**
 * Where one start of `node dist/server.js` goes: the server logs its steps in its ready line
 * (`startMs`, src/server.ts): Node's boot and the imports, createContext (migrations, the instance
 * secret), buildApp (plugins and routes), then the jobs, the delivery worker and listen. Node's boot
 * alone is an empty script's first line in a child of its own. Then the memory beacon store's load
 * (its first use, not at start) run warm, timed alone in a script on tsc's dist/.
 */
const BOOT_SCRIPT = 'process.stdout.write(JSON.stringify({ bootMs: performance.now() }));';
const BEACON_QUERY_SCRIPT = `
const dist = (f) => new URL(f, ${JSON.stringify(`${new URL('../dist/', import.meta.url).href}`)}).href;
const [{ loadConfig }, { createContext }] = await Promise.all([dist('config.js'), dist('context.js')].map((u) => import(u)));
const ctx = await createContext(loadConfig());
const q0 = performance.now();
const rows = await ctx.db.selectFrom('beacon_states').selectAll().where('active', '=', 1).execute();
const beaconQueryMs = performance.now() - q0;
await ctx.close();
process.stdout.write(JSON.stringify({ beaconRows: rows.length, beaconQueryMs }));
`;

interface Phases {
  bootMs: number;
  importMs: number;
  contextMs: number;
  appMs: number;
  listenMs: number;
  beaconRows: number;
  beaconQueryMs: number;
}

/** Runs `node --input-type=module -e script` with `env` and parses what it prints as JSON. */
async function nodeScript<T>(script: string, env: Record<string, string>): Promise<T> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`a timing script failed (code ${code}):\n${err}${out}`);
  return JSON.parse(out) as T;
}

async function phases(dataDir: string, env: Record<string, string>): Promise<Phases> {
  const pathEnv = process.env.PATH ?? '';
  let ready: { startMs?: { import: number; context: number; app: number; listen: number } } | undefined;
  await startOnce(dataDir, { ...env, LOG_LEVEL: 'info' }, {
    whileUp: async (_url, out) => {
      // The line may reach the pipe just after /readyz's first 200.
      for (let waited = 0; !ready && waited < 5_000; waited += 10) {
        const line = out().split('\n').find((l) => l.includes('"startMs"'));
        if (line) ready = JSON.parse(line) as typeof ready;
        else await new Promise((r) => setTimeout(r, 10));
      }
    },
  });
  const steps = ready?.startMs;
  if (!steps) throw new Error('the ready line of `node dist/server.js` carries no startMs');
  const { bootMs } = await nodeScript<{ bootMs: number }>(BOOT_SCRIPT, { PATH: pathEnv });
  const { beaconRows, beaconQueryMs } = await nodeScript<{ beaconRows: number; beaconQueryMs: number }>(BEACON_QUERY_SCRIPT, { PATH: pathEnv, ...benchEnv(dataDir, env) });
  return { bootMs, importMs: steps.import - bootMs, contextMs: steps.context, appMs: steps.app, listenMs: steps.listen, beaconRows, beaconQueryMs };
}

/** The packages dist/ imports statically (type-only imports are erased by tsc: what a start loads), by name. */
function startPackages(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name.endsWith('.js')) {
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/^(?:import|export)\s(?:[^;'"]*?\sfrom\s*)?['"]([^'"]+)['"]/gm)) {
          const spec = m[1]!;
          if (spec.startsWith('.') || spec.startsWith('node:')) continue;
          names.add(spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/'));
        }
      }
    }
  };
  walk(path.join(ROOT, 'dist'));
  return [...names].sort();
}

/** Median ms of importing `pkg` alone in a fresh Node (`runs` children), its own dependencies included. */
async function importMs(pkg: string, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const script = `const t = performance.now(); await import(${JSON.stringify(pkg)}); process.stdout.write(String(performance.now() - t));`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      let err = '';
      child.stdout.on('data', (b: Buffer) => (text += b.toString()));
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`importing ${pkg} failed (code ${code}): ${err}`))));
    });
    times.push(Number(out));
  }
  return median(times);
}

// ---------------------------------------------------------------------------------------------
// Seeding, one interface over both engines.

const INCIDENT_COLUMNS = [
  col('org_id', 'bigint'), col('livemode', 'int'), col('title'), col('status'), col('priority'), col('source'), col('creator_id', 'bigint'),
  col('customer_token'), col('sla_due_at'), col('sla_warn_at'), col('resolved_at'), col('created_at'), col('updated_at'),
];
const USER_COLUMNS = [col('email'), col('name'), col('slug'), col('plan'), col('timezone'), col('is_admin', 'int'), col('created_at'), col('updated_at')];
const MEMBERSHIP_COLUMNS = [col('org_id', 'bigint'), col('user_id', 'bigint'), col('role'), col('is_primary', 'int'), col('created_at')];
const DEVICE_COLUMNS = [
  col('user_id', 'bigint'), col('org_id', 'bigint'), col('livemode', 'int'), col('name'), col('device_id'), col('token_hash'), col('created_at'), col('updated_at'),
  col('last_seen_at'),
];
const BEACON_COLUMNS = [
  col('livemode', 'int'), col('user_id', 'bigint'), col('device_key'), col('device_id'), col('org_id', 'bigint'), col('active', 'int'), col('lat', 'float8'),
  col('lng', 'float8'), col('accuracy', 'float8'), col('meta'), col('position_at'), col('last_seen_at'),
];
const STATUSES = ['open', 'in_progress', 'resolved', 'closed'] as const;
const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
const DAY_MS = 24 * 3600 * 1000;

/**
 * Into the database of one registered owner (its primary org): USERS members, DEVICES tracker devices
 * spread over them, each with an active beacon state (what the memory beacon store loads on first use), and
 * INCIDENTS incidents of the org over the past year, with their counts and list version.
 */
async function seed(w: BulkWriter): Promise<{ ms: number }> {
  const t0 = performance.now();
  const [owner] = await w.query<{ org_id: number; user_id: number }>(`select org_id, user_id from memberships where is_primary = 1`);
  if (!owner) throw new Error('no registered owner to seed for');
  const orgId = Number(owner.org_id);
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const then = iso(now - 30 * DAY_MS);

  await w.insert('users', USER_COLUMNS, Array.from({ length: USERS }, (_, i) => [`cold-${i}@bench.test`, `Responder ${i}`, `cold-${i}`, 'free', 'UTC', 0, then, then]));
  const users = (await w.query<{ id: number }>(`select id from users where email like 'cold-%' order by id`)).map((u) => Number(u.id));
  if (users.length !== USERS) throw new Error(`${users.length} seeded users, not ${USERS}`);
  await w.insert('memberships', MEMBERSHIP_COLUMNS, users.map((id) => [orgId, id, 'member', 0, then]));

  const devices: unknown[][] = [];
  const beacons: unknown[][] = [];
  for (let i = 0; i < DEVICES; i++) {
    const userId = users[i % USERS]!;
    const deviceId = `cold-device-${i}`;
    const seen = iso(now - (i % 60) * 1000);
    devices.push([userId, orgId, 1, `Device ${i}`, deviceId, randomBytes(32).toString('hex'), then, then, seen]);
    beacons.push([1, userId, deviceId, deviceId, orgId, 1, 52 + (i % 100) / 1000, 4.9 + Math.floor(i / 100) / 1000, 10, '{}', seen, seen]);
  }
  await w.insert('devices', DEVICE_COLUMNS, devices);
  await w.insert('beacon_states', BEACON_COLUMNS, beacons);

  const CHUNK = 10_000;
  const start = now - 365 * DAY_MS;
  const step = (365 * DAY_MS) / INCIDENTS;
  for (let from = 0; from < INCIDENTS; from += CHUNK) {
    const rows: unknown[][] = [];
    const tokens = randomBytes(24 * CHUNK);
    for (let i = from; i < Math.min(INCIDENTS, from + CHUNK); i++) {
      const created = Math.floor(start + i * step);
      const status = STATUSES[i % 4]!;
      const done = status === 'resolved' || status === 'closed';
      const j = (i - from) * 24;
      rows.push([
        orgId, 1, `Seeded incident ${i + 1}`, status, PRIORITIES[Math.floor(i / 4) % 4]!, 'api', Number(owner.user_id),
        tokens.subarray(j, j + 24).toString('base64url'), iso(created + 4 * 3600_000), iso(created + 3 * 3600_000),
        done ? iso(created + 3600_000) : null, iso(created), iso(done ? created + 3600_000 : created),
      ]);
    }
    await w.insert('incidents', INCIDENT_COLUMNS, rows);
  }
  // The counts and list version the API's own writes would have left.
  await w.query(`delete from incident_counts where org_id = $1`, [orgId]);
  await w.query(
    `insert into incident_counts (org_id, livemode, status, priority, n)
     select org_id, livemode, status, priority, count(*) from incidents where org_id = $1 group by org_id, livemode, status, priority`,
    [orgId],
  );
  await w.query(`delete from incident_list_versions where org_id = $1`, [orgId]);
  await w.query(`insert into incident_list_versions (org_id, livemode, version) values ($1, 1, 1)`, [orgId]);
  await w.finish();
  return { ms: performance.now() - t0 };
}

/** Throws unless the database holds the seeded rows (and `active` beacon states). */
async function checkSeeded(w: BulkWriter): Promise<void> {
  const [c] = await w.query<{ incidents: number; devices: number; beacons: number }>(
    `select (select count(*) from incidents) as incidents, (select count(*) from devices) as devices, (select count(*) from beacon_states where active = 1) as beacons`,
  );
  if (Number(c?.incidents) !== INCIDENTS || Number(c?.devices) !== DEVICES || Number(c?.beacons) !== DEVICES) {
    throw new Error(`seeded ${JSON.stringify(c)}, expected ${INCIDENTS} incidents, ${DEVICES} devices and active beacon states`);
  }
}

// ---------------------------------------------------------------------------------------------
// One engine.

interface Row {
  engine: Engine;
  label: string;
  starts: Start[];
}

interface EngineRun {
  rows: Row[];
  seedMs: number;
  /** The steps of restarts (not in the table), empty (none in quick mode) and seeded. */
  phases: { empty: Phases[]; seeded: Phases[] };
}

async function register(url: string): Promise<void> {
  const res = await fetch(`${url}/v1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'owner@bench.test', password: 'correct horse battery staple', name: 'Owner' }),
  });
  if (res.status !== 201) throw new Error(`POST /v1/users: ${res.status} ${await res.text()}`);
}

async function runEngine(engine: Engine): Promise<EngineRun> {
  const dirs: string[] = [];
  const schemas: string[] = [];
  /** A fresh, empty database: a data dir, and on PostgreSQL a schema of its own. */
  const fresh = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-cold-'));
    dirs.push(dir);
    const env: Record<string, string> = {};
    if (engine === 'PostgreSQL') {
      const schema = `bench_cold_${randomBytes(4).toString('hex')}`;
      schemas.push(schema);
      Object.assign(env, { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema });
    }
    return { dir, env, schema: schemas.at(-1) };
  };
  const log = (s: string) => process.stderr.write(`  ${engine}: ${s}\n`);
  try {
    const first: Start[] = [];
    let db = fresh();
    for (let i = 0; i < REPS; i++) {
      if (i > 0) db = fresh();
      first.push(await startOnce(db.dir, db.env));
    }
    log(`first start (migrations) ${first.map((s) => s.readyMs.toFixed(0)).join(', ')} ms`);
    // The last database is migrated: restarts of it, empty; the last one registers the owner after its measurement.
    const empty: Start[] = [];
    for (let i = 0; i < REPS; i++) empty.push(await startOnce(db.dir, db.env, i === REPS - 1 ? { whileUp: register } : {}));
    log(`restart, empty ${empty.map((s) => s.readyMs.toFixed(0)).join(', ')} ms`);
    const emptyPhases: Phases[] = [];
    for (let i = 0; i < (QUICK ? 0 : PHASE_REPS); i++) emptyPhases.push(await phases(db.dir, db.env));

    log(`seeding ${INCIDENTS.toLocaleString('en-US')} incidents, ${DEVICES.toLocaleString('en-US')} devices...`);
    const w = engine === 'SQLite' ? sqliteBulkWriter(path.join(db.dir, 'muster.db')) : await pgBulkWriter(PG_URL, db.schema!, ['users', 'memberships', 'incidents', 'incident_counts', 'devices', 'beacon_states']);
    let seedMs: number;
    try {
      seedMs = (await seed(w)).ms;
      await checkSeeded(w);
    } finally {
      await w.close();
    }
    log(`seeded in ${(seedMs / 1000).toFixed(1)} s`);
    const seeded: Start[] = [];
    for (let i = 0; i < REPS; i++) seeded.push(await startOnce(db.dir, db.env));
    log(`restart, seeded ${seeded.map((s) => s.readyMs.toFixed(0)).join(', ')} ms`);
    const seededPhases: Phases[] = [];
    // Quick runs time the steps once (seeded only), so CI runs this code too.
    for (let i = 0; i < PHASE_REPS; i++) seededPhases.push(await phases(db.dir, db.env));
    const size = `${INCIDENTS.toLocaleString('en-US')} incidents, ${DEVICES.toLocaleString('en-US')} devices`;
    return {
      seedMs,
      phases: { empty: emptyPhases, seeded: seededPhases },
      rows: [
        { engine, label: 'empty, first start (migrations run)', starts: first },
        { engine, label: 'empty, restart', starts: empty },
        { engine, label: `${size}, restart`, starts: seeded },
      ],
    };
  } finally {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    await dropPgSchemas(PG_URL, schemas);
  }
}

// ---------------------------------------------------------------------------------------------
// The section.

const f0 = (n: number) => Math.round(n).toLocaleString('en-US');

/** One row of the steps' table: the medians of `runs`. */
function phaseRow(engine: Engine, label: string, runs: Phases[]): string {
  const m = (k: keyof Phases) => median(runs.map((r) => r[k]));
  const perK = m('beaconRows') > 0 ? ` (${((m('beaconQueryMs') * 1000) / m('beaconRows')).toFixed(1)} us a row)` : '';
  return `| ${engine} | ${label} | ${runs.length} | ${f0(m('bootMs'))} | ${f0(m('importMs'))} | ${f0(m('contextMs'))} | ${f0(m('appMs'))} | ${f0(m('listenMs'))} | ${f0(m('beaconRows'))}: ${m('beaconQueryMs').toFixed(1)} ms${perK} |`;
}

export async function run(): Promise<BenchResult> {
  ensureBuilt();
  const engines: EngineRun[] = [];
  for (const engine of ['SQLite', 'PostgreSQL'] as const) engines.push(await runEngine(engine));
  const rows = engines.flatMap((e) => e.rows);
  // Full runs only (28 packages x 3 children would take a quick run past its budget).
  const imports: { pkg: string; ms: number }[] = [];
  if (!QUICK) {
    process.stderr.write('  timing the imports of the packages dist/ loads...\n');
    for (const pkg of startPackages()) imports.push({ pkg, ms: await importMs(pkg, 3) });
    imports.sort((a, b) => b.ms - a.ms);
  }

  const table = [
    '| Engine | Case | Median ms | Max ms | CPU ms (median) | RSS MB (median) | Goal (< 2 s) |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- |',
    ...rows.map((r) => {
      const ms = median(r.starts.map((s) => s.readyMs));
      const max = Math.max(...r.starts.map((s) => s.readyMs));
      const cpu = median(r.starts.map((s) => s.cpuMs));
      const rss = median(r.starts.map((s) => s.rssMb));
      return `| ${r.engine} | ${r.label} | ${f0(ms)} | ${f0(max)} | ${f0(cpu)} | ${rss.toFixed(0)} | ${max < GOAL_MS ? 'met' : 'not met'} |`;
    }),
  ];
  const markdown = [
    `## Cold start (${NAME})`,
    '',
    `From spawning \`node dist/server.js\` (a child process, its own data dir; on PostgreSQL its own schema, dropped at the end) to the first 200 of \`GET /readyz\`, polled every 5 ms: ${REPS} start${REPS === 1 ? '' : 's'} per case.`,
    'CPU is the child\'s user + system time when /readyz first answered (10 ms ticks of `/proc/<pid>/stat`), RSS its resident set then. "First start" is a fresh, empty database (every migration runs);',
    `"restart" a migrated one. The seeded database holds ${INCIDENTS.toLocaleString('en-US')} incidents of one org and ${DEVICES.toLocaleString('en-US')} tracker devices of ${USERS} members, each with an active beacon state, written straight into the database after the first start.`,
    'Restarts read the database from a warm page cache. The goal (issue #40): under 2 s, judged on the max of each row. The time moves with the load of the shared machine; the CPU time',
    'much less (a start runs mostly on one thread, so a CPU time near or over 2 s leaves the goal out of reach even on an idle machine).',
    '',
    ...table,
    '',
    '### Where the time goes',
    '',
    "The steps of a start of `node dist/server.js` (one file: `npm run build:server` bundles src/server.ts with its packages, scripts/bundle-server.mjs), as the server logs them in its ready line (`startMs`; a start of its own, not in the table above; medians):",
    "Node's boot (an empty script's first line, in a child of its own), importing (the server's first line, less that boot), `createContext` (open, migrations check, instance secret), `buildApp` (plugins and routes), then the jobs, the delivery worker and `listen`;",
    'then the memory beacon store\'s load (`select * from beacon_states where active = 1`, run by its first call, not at start), warm, alone.',
    '',
    '| Engine | Database | Runs | Boot ms | Import ms | createContext ms | buildApp ms | listen ms | Active beacon rows: query |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...engines.flatMap((e) => {
      const engine = e.rows[0]!.engine;
      return [...(e.phases.empty.length ? [phaseRow(engine, 'empty', e.phases.empty)] : []), ...(e.phases.seeded.length ? [phaseRow(engine, 'seeded', e.phases.seeded)] : [])];
    }),
    '',
    ...(imports.length
      ? [
          `The packages the bundle holds, each imported alone from node_modules in a fresh Node, unbundled (median of 3; a package's own dependencies count with it, and packages share some, so the sum, ${f0(imports.reduce((n, i) => n + i.ms, 0))} ms, is over the whole; what they cost unbundled, against the import column above):`,
          '',
          imports.map((i) => `${i.pkg} ${f0(i.ms)}`).join(', ') + ' (ms).',
          '',
          'Packages only some configurations or requests need load on first use and are not in this list (src/lib/lazy-require.ts): `pg` with DATABASE_URL and `better-sqlite3` without it (src/db/database.ts), `ioredis` with REDIS_URL (src/lib/redis.ts), `smtp-server` when INBOUND_SMTP_PORT starts a listener, `nodemailer` with the first email, `prom-client` with the first counted event or scrape, `standardwebhooks` with the first signed webhook, `xml-js` with the first CalDAV answer, `sharp` with the first upload, `web-push` with the first push, the mail parsers with the first inbound message. What a start still loads is the framework and what every request path needs: Fastify (with ajv, fast-json-stringify, avvio, find-my-way, semver), Kysely, TypeBox, the route plugins (`@fastify/static`, `@fastify/multipart`, `@fastify/swagger` with `yaml`) and Muster\'s own modules, bundled into the one file Node reads and compiles (the import column above), where unbundled they were ~1,300 files Node resolved, read and compiled one by one.',
          '',
        ]
      : []),
    '### What grows with the data at start',
    '',
    '- Nothing: without Redis the memory beacon store reads the active rows of `beacon_states` on its first call (the first ping, map, responder search or silence sweep; src/modules/signals/beacon-memory.ts), which the calls of that moment wait for, not at start: that first call pays the last column above (per row, with the active devices, not the incidents). With Redis the store reads nothing.',
    '- Migrations read their own table, the instance secret one row of `settings`, the track recorder the orgs that keep tracks (one row each, not awaited), the jobs first run one interval after the start, and the delivery worker\'s first run claims one batch of due outbox rows by an index (`outbox_due_idx`).',
    '',
    `Seeding (not measured): ${engines.map((e) => `${e.rows[0]!.engine} ${(e.seedMs / 1000).toFixed(0)} s`).join(', ')}.`,
    '',
    `Machine: ${machine()}. Command: \`TEST_DATABASE_URL=${PG_URL} npm run bench -- ${NAME}\`.`,
  ].join('\n');
  return { name: NAME, markdown };
}
