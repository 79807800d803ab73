// Crash safety: the real server is killed with SIGKILL at a random moment of a burst of bookings,
// incidents and signals, 10 rounds by default (CRASH_ROUNDS). After each restart, every write a client saw acknowledged
// (2xx with its id) is in the database, including those that shared a grouped commit on SQLite (a
// storm of simultaneous incidents each round; the server logs each group's size), every booking has
// its outbox rows (the attendee's email, the host's email, the webhook), and on SQLite `PRAGMA integrity_check` answers ok. On
// PostgreSQL (TEST_DATABASE_URL) the same rounds run on a schema of their own.
// The seed of the kill moments is printed; CRASH_SEED reproduces a run.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { entryArgs } from '../entry.js';
import { dropTestSchema, testSchemaName } from '../helpers.js';
import { freePort } from '../ports.js';

const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
// 10 rounds keep CI near its time budget; `CRASH_ROUNDS=50 npm test -- crash` digs deeper.
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 10);
const PER_KIND = 12;
const PG_URL = process.env.TEST_DATABASE_URL;

/** mulberry32: a small seeded PRNG, so a printed seed replays the same kill moments. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Server {
  child: ChildProcess;
  base: string;
  exited: Promise<void>;
  output: () => string;
}

describe(`crash safety under SIGKILL (${PG_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-crash-'));
  const schema = PG_URL ? testSchemaName('crash') : undefined;
  let server: Server | undefined;
  let deadPort: number;
  /** Grouped commits seen in the servers' logs (SQLite): how many, and how many had several members. */
  const groups = {
    all: 0,
    shared: 0,
    largest: 0,
    record(size: number) {
      this.all += 1;
      if (size > 1) this.shared += 1;
      this.largest = Math.max(this.largest, size);
    },
  };

  async function start(): Promise<Server> {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      PUBLIC_URL: base,
      // debug: the server logs each grouped commit's size ("grouped commit"), counted below.
      LOG_LEVEL: 'debug',
      MUSTER_ALLOW_PRIVATE_WEBHOOKS: 'true',
      RATE_LIMIT_API: '1000000',
      RATE_LIMIT_AUTH: '1000000',
      RATE_LIMIT_BOOKING: '1000000',
      RATE_LIMIT_PUBLIC: '1000000',
      OUTBOX_POLL_MS: '200',
    };
    delete env.DATABASE_URL;
    delete env.DATABASE_SCHEMA;
    if (PG_URL) Object.assign(env, { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema! });
    const child = spawn(process.execPath, entryArgs('src/server.ts'), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let lines = '';
    child.stdout.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-4000);
      lines += d.toString();
      const complete = lines.split('\n');
      lines = complete.pop()!;
      for (const line of complete) {
        const m = /"group":(\d+).*"msg":"grouped commit"/.exec(line);
        if (m) groups.record(Number(m[1]));
      }
    });
    child.stderr.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Generous: a loaded machine (or PostgreSQL ending the killed process's sessions) can take a while.
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
      if (child.exitCode !== null) throw new Error(`server exited at start (${child.exitCode}):\n${out}`);
      try {
        const res = await fetch(`${base}/readyz`);
        if (res.status === 200) return { child, base, exited, output: () => out };
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    child.kill('SIGKILL');
    throw new Error(`server did not get ready:\n${out}`);
  }

  async function kill(s: Server): Promise<void> {
    s.child.kill('SIGKILL');
    await s.exited;
  }

  before(async () => {
    deadPort = await freePort(); // nothing listens there: webhooks fail and stay queued for retries
  });
  after(async () => {
    if (server) await kill(server);
    if (schema) await dropTestSchema(schema);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Reads the database behind the dead or restarted server. */
  async function inspect(): Promise<{
    integrity: string;
    incidents: Set<number>;
    signals: Set<number>;
    bookings: string[];
    outbox: { kind: string; topic: string; payload: string }[];
  }> {
    const q = {
      incidents: 'select id from incidents',
      signals: 'select id from signals',
      bookings: 'select id from bookings',
      outbox: "select kind, topic, payload from outbox where topic like 'booking.%'",
    };
    if (!PG_URL) {
      const db = new Database(path.join(dataDir, 'muster.db'), { readonly: true, fileMustExist: true });
      try {
        const integrity = (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join(', ');
        return {
          integrity,
          incidents: new Set((db.prepare(q.incidents).all() as { id: number }[]).map((r) => r.id)),
          signals: new Set((db.prepare(q.signals).all() as { id: number }[]).map((r) => r.id)),
          bookings: (db.prepare(q.bookings).all() as { id: string }[]).map((r) => r.id),
          outbox: db.prepare(q.outbox).all() as { kind: string; topic: string; payload: string }[],
        };
      } finally {
        db.close();
      }
    }
    const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await c.connect();
    try {
      const ids = async (sql: string) => (await c.query<{ id: number }>(sql)).rows.map((r) => Number(r.id));
      return {
        integrity: 'ok',
        incidents: new Set(await ids(q.incidents)),
        signals: new Set(await ids(q.signals)),
        bookings: (await c.query<{ id: string }>(q.bookings)).rows.map((r) => r.id),
        outbox: (await c.query<{ kind: string; topic: string; payload: string }>(q.outbox)).rows,
      };
    } finally {
      await c.end();
    }
  }

  test(`${ROUNDS} rounds of a burst cut by SIGKILL lose no acknowledged write`, async () => {
    console.log(`crash seed ${SEED} (CRASH_SEED=${SEED} reproduces the kill moments), ${ROUNDS} rounds`);
    const random = prng(SEED);

    // First start: a user, a live key, an event type with a webhook to a dead port.
    server = await start();
    const base = () => server!.base;
    const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(base() + url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const email = `crash-${process.pid}@example.com`;
    assert.equal((await post('/v1/users', { email, password: 'correct horse battery', name: 'Crash Host' })).status, 201);
    const loginRes = await post('/v1/auth/login', { email, password: 'correct horse battery' });
    const cookie = loginRes.headers.get('set-cookie')!.split(';')[0]!;
    const key = ((await (await post('/v1/api-keys', { name: 'crash', mode: 'live' }, { cookie })).json()) as { key: string }).key;
    const auth = { 'x-api-key': key };
    const week = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '00:00', end: '24:00' }));
    const etRes = await post(
      '/v1/event-types',
      { name: 'Crash Call', duration_minutes: 5, availability: { timezone: 'UTC', weekly: week }, max_advance_days: 30, webhook_url: `http://127.0.0.1:${deadPort}/hook` },
      auth,
    );
    assert.equal(etRes.status, 201);
    const et = (await etRes.json()) as { id: number };

    // Slots from availability, each handed out once: a request cut by the kill may still have booked it.
    const slots: string[] = [];
    for (let d = 1; slots.length < ROUNDS * PER_KIND + 10; d += 1) {
      const date = new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10);
      const res = await fetch(`${base()}/v1/availability?event_type_id=${et.id}&date=${date}`, { headers: auth });
      assert.equal(res.status, 200);
      slots.push(...((await res.json()) as { slots: { start_time: string }[] }).slots.map((s) => s.start_time));
    }

    const acked = { incidents: [] as number[], signals: [] as number[], bookings: [] as string[] };
    let attempted = 0;
    let killedMidway = 0;
    for (let round = 1; round <= ROUNDS; round += 1) {
      if (!server) server = await start();
      // A first write of each kind warms the fresh process up (and is owed like any other).
      const warm = await Promise.all([
        post('/v1/tickets', { title: `Warm ${round}` }, auth),
        post('/v1/signals', { type: 'note', note: `Warm ${round}` }, auth),
      ]);
      for (const res of warm) assert.equal(res.status, 201);
      acked.incidents.push(((await warm[0].json()) as { Id: number }).Id);
      acked.signals.push(((await warm[1].json()) as { Id: number }).Id);
      // The burst: every request starts at a random moment of ~400 ms; the kill comes at a random moment of it.
      const killAt = 30 + random() * 500;
      const jobs: Promise<void>[] = [];
      const fire = (delay: number, send: () => Promise<Response>, keep: (body: Record<string, unknown>) => void) =>
        jobs.push(
          (async () => {
            await sleep(delay);
            attempted += 1;
            try {
              const res = await send();
              if (res.status >= 200 && res.status < 300) keep((await res.json()) as Record<string, unknown>);
              else if (res.status >= 500) assert.fail(`a ${res.status} before the kill: ${await res.text()}`);
            } catch (err) {
              if (err instanceof assert.AssertionError) throw err;
              // The connection died with the server: not acknowledged, so nothing is owed.
            }
          })(),
        );
      for (let i = 0; i < PER_KIND; i += 1) {
        const start = slots.shift()!;
        fire(random() * 400, () => post('/v1/bookings', { event_type_id: et.id, attendee_name: `Guest ${round}.${i}`, attendee_email: `g${round}x${i}@example.com`, start_time: start }, auth), (b) =>
          acked.bookings.push(b.id as string),
        );
        fire(random() * 400, () => post('/v1/tickets', { title: `Crash ${round}.${i}`, priority: 'urgent' }, auth), (b) => acked.incidents.push(b.Id as number));
        fire(random() * 400, () => post('/v1/signals', { type: i % 2 ? 'note' : 'checkin', note: `Crash ${round}.${i}`, lat: 48.1, lng: 11.5 }, auth), (b) =>
          acked.signals.push(b.Id as number),
        );
      }
      // SQLite: a storm of a dozen incidents sent at one moment, so they reach the server together and
      // commit in shared groups, which the kill may cut between their COMMIT and their answers.
      // (PostgreSQL commits each on its own connection: nothing new to cut there.)
      const stormAt = random() * 400;
      for (let i = 0; i < (PG_URL ? 0 : PER_KIND); i += 1) {
        fire(stormAt, () => post('/v1/tickets', { title: `Storm ${round}.${i}` }, auth), (b) => acked.incidents.push(b.Id as number));
      }
      await sleep(killAt);
      await kill(server);
      server = undefined;
      const settled = await Promise.allSettled(jobs);
      for (const s of settled) if (s.status === 'rejected') throw s.reason;
      if (acked.bookings.length + acked.incidents.length + acked.signals.length < attempted) killedMidway += 1;

      // Restart (recovery runs at open), then read the database beside it.
      server = await start();
      const seen = await inspect();
      const label = `round ${round} (seed ${SEED})`;
      assert.equal(seen.integrity, 'ok', `${label}: integrity_check`);
      const lostIncidents = acked.incidents.filter((id) => !seen.incidents.has(id));
      const lostSignals = acked.signals.filter((id) => !seen.signals.has(id));
      const bookingIds = new Set(seen.bookings);
      const lostBookings = acked.bookings.filter((id) => !bookingIds.has(id));
      assert.deepEqual({ lostIncidents, lostSignals, lostBookings }, { lostIncidents: [], lostSignals: [], lostBookings: [] }, `${label}: acknowledged writes lost`);
      // Every booking, acknowledged or not, came with its outbox rows in the same transaction.
      const missing = seen.bookings.filter((id) => {
        const rows = seen.outbox.filter((o) => o.topic.startsWith('booking.created') && o.payload.includes(id));
        const kinds = rows.map((o) => `${o.kind}:${o.topic}`).sort();
        return !(kinds.includes('email:booking.created') && kinds.includes('email:booking.created.host') && kinds.includes('webhook:booking.created'));
      });
      assert.deepEqual(missing, [], `${label}: bookings without their outbox rows`);
    }

    // The API agrees with the database: each acknowledged incident is readable.
    const sample = acked.incidents.slice(-10);
    for (const id of sample) assert.equal((await fetch(`${base()}/v1/tickets/${id}`, { headers: auth })).status, 200, `incident ${id} through the API`);
    console.log(
      `crash: ${ROUNDS} rounds, ${attempted} requests, acknowledged ${acked.bookings.length} bookings, ${acked.incidents.length} incidents, ${acked.signals.length} signals; ${killedMidway} rounds cut requests short`,
    );
    assert.ok(acked.bookings.length > 0 && acked.incidents.length > 0 && acked.signals.length > 0, 'some writes of each kind were acknowledged');
    assert.ok(killedMidway > 0, 'at least one kill cut requests short');
    if (!PG_URL) {
      console.log(`crash: ${groups.all} grouped commits, ${groups.shared} with several transactions, the largest ${groups.largest}`);
      assert.ok(groups.shared > 0, 'concurrent writes committed in shared groups');
    }
  });
});
