// Beacon state across a real `kill -9` (no REDIS_URL: the state is in the server's memory).
// Acknowledged transitions (beacon_on, beacon_off) survive with their audit rows; the last
// positions are at most one flush old; after a restart the map lists the devices again; a
// graceful stop (SIGTERM) flushes the newest positions. SQLite, or PostgreSQL with TEST_DATABASE_URL.
import assert from 'node:assert/strict';

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { killServer, startServer, type Server } from './crash-server.js';
import { dropTestSchema, testSchemaName } from './helpers.js';

const PG_URL = process.env.TEST_DATABASE_URL;
const FLUSH_MS = 200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Row {
  device_key: string;
  active: number;
  lat: number;
}

describe(`beacon state across kill -9 (${PG_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-beacon-crash-'));
  const schema = PG_URL ? testSchemaName('bcrash') : undefined;
  let server: Server | undefined;

  const start = () => startServer({ dataDir, flushMs: FLUSH_MS, ...(PG_URL ? { pg: { url: PG_URL, schema: schema! } } : {}) });

  after(async () => {
    await killServer(server);
    if (schema) await dropTestSchema(schema);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The beacon rows and audit actions in the database behind the (dead or live) server. */
  async function inspect(): Promise<{ rows: Map<string, Row>; audit: string[] }> {
    const q = {
      rows: 'select device_key, active, lat from beacon_states',
      audit: "select action, device_id from audit_log where action like 'beacon_%' order by id",
    };
    let rows: Row[];
    let audit: { action: string; device_id: string }[];
    if (!PG_URL) {
      const db = new Database(path.join(dataDir, 'muster.db'), { readonly: true, fileMustExist: true });
      try {
        rows = db.prepare(q.rows).all() as Row[];
        audit = db.prepare(q.audit).all() as { action: string; device_id: string }[];
      } finally {
        db.close();
      }
    } else {
      const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
      await c.connect();
      try {
        rows = (await c.query<Row>(q.rows)).rows;
        audit = (await c.query<{ action: string; device_id: string }>(q.audit)).rows;
      } finally {
        await c.end();
      }
    }
    return { rows: new Map(rows.map((r) => [r.device_key, { ...r, active: Number(r.active), lat: Number(r.lat) }])), audit: audit.map((a) => `${a.action}:${a.device_id}`) };
  }

  test('transitions answered survive kill -9; positions are at most one flush old; SIGTERM flushes', async () => {
    server = await start();
    const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(server!.base + url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const email = `beacon-crash-${process.pid}@example.com`;
    assert.equal((await post('/v1/users', { email, password: 'correct horse battery', name: 'Crash Walker' })).status, 201);
    const cookie = (await post('/v1/auth/login', { email, password: 'correct horse battery' })).headers.get('set-cookie')!.split(';')[0]!;
    const key = ((await (await post('/v1/api-keys', { name: 'crash', mode: 'live' }, { cookie })).json()) as { key: string }).key;
    const auth = { 'x-api-key': key };
    const beacon = async (device: string, lat: number) => assert.equal((await post('/v1/signals', { type: 'beacon', lat, lng: 4, meta: { device_id: device } }, auth)).status, 201);

    // a: on, then moved to 2; wait (polling the database, no fixed sleep) until a flush wrote 2.
    await beacon('a', 1);
    await beacon('a', 2);
    for (const deadline = Date.now() + 30_000; (await inspect()).rows.get('a')?.lat !== 2; ) {
      assert.ok(Date.now() < deadline, 'a flush wrote the position within 30 s');
      await sleep(FLUSH_MS / 2);
    }
    // Then, with no time for a flush: a moves to 3, b turns on, c turns on and off; kill -9 at once.
    await beacon('a', 3);
    await beacon('b', 10);
    await beacon('c', 20);
    const off = await fetch(`${server.base}/v1/signals/beacon`, { method: 'DELETE', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ device_id: 'c' }) });
    assert.equal(off.status, 200);
    server.child.kill('SIGKILL');
    await server.exited;

    const dead = await inspect();
    assert.deepEqual(dead.audit, ['beacon_on:a', 'beacon_on:b', 'beacon_on:c', 'beacon_off:c'], 'every acknowledged transition, once');
    assert.equal(dead.rows.get('a')?.active, 1);
    assert.ok([2, 3].includes(dead.rows.get('a')!.lat), `a's position is the flushed one or newer (got ${dead.rows.get('a')!.lat})`);
    assert.deepEqual([dead.rows.get('b')?.active, dead.rows.get('b')?.lat], [1, 10], 'a turn-on carries its position');
    assert.deepEqual([dead.rows.get('c')?.active, dead.rows.get('c')?.lat], [0, 20]);

    // Restarted: the map comes back from the table.
    server = await start();
    const map = (await (await fetch(`${server.base}/v1/signals/beacons`, { headers: auth })).json()) as { beacons: { device_id: string; lat: number }[] };
    assert.deepEqual(map.beacons.map((b) => b.device_id).sort(), ['a', 'b']);
    // A ping of an active device is no transition after the restart either.
    await beacon('b', 11);
    await beacon('a', 4);
    // A graceful stop flushes what is only in memory.
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const stopped = await inspect();
    assert.deepEqual([stopped.rows.get('a')?.lat, stopped.rows.get('b')?.lat], [4, 11]);
    assert.deepEqual(stopped.audit, dead.audit, 'no new transition');
  });
});
