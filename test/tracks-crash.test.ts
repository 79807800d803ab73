// Tracks across a real `kill -9` (issue #38; docs/trackers.md, "Tracks"): positions written by a
// flush before the kill are all in the track, once; the positions of the last flush interval may be
// lost (never doubled); after the restart the instance knows again that the org keeps tracks (its
// cache is loaded at start), and a graceful stop (SIGTERM) writes what is only in memory. Moves of the
// staged positions to the track run every few flushes, so the kill may land in one: a position is
// staged or moved, never both.
// SQLite, or PostgreSQL with TEST_DATABASE_URL.
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
const MOVE_MS = 3 * FLUSH_MS;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`tracks across kill -9 (${PG_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-tracks-crash-'));
  const schema = PG_URL ? testSchemaName('tcrash') : undefined;
  let server: Server | undefined;

  const start = () => startServer({ dataDir, flushMs: FLUSH_MS, trackMoveMs: MOVE_MS, ...(PG_URL ? { pg: { url: PG_URL, schema: schema! } } : {}) });

  after(async () => {
    await killServer(server);
    if (schema) await dropTestSchema(schema);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The latitudes stored in the track (staged or moved), by the dead or live server's database. */
  async function stored(): Promise<number[]> {
    const q = "select lat from (select lat, device_id from position_tracks union all select lat, device_id from track_staging) p where device_id = 'walker' order by lat";
    let rows: { lat: number }[];
    if (!PG_URL) {
      const db = new Database(path.join(dataDir, 'muster.db'), { readonly: true, fileMustExist: true });
      try {
        rows = db.prepare(q).all() as { lat: number }[];
      } finally {
        db.close();
      }
    } else {
      const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
      await c.connect();
      try {
        rows = (await c.query<{ lat: number }>(q)).rows;
      } finally {
        await c.end();
      }
    }
    return rows.map((r) => Number(r.lat));
  }

  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  test('flushed positions survive kill -9 once; the last interval may be lost; the restart keeps tracking; SIGTERM writes the rest', async () => {
    server = await start();
    const call = (method: string, url: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(server!.base + url, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const email = `tracks-crash-${process.pid}@example.com`;
    assert.equal((await call('POST', '/v1/users', { email, password: 'correct horse battery', name: 'Track Walker' })).status, 201);
    const cookie = (await call('POST', '/v1/auth/login', { email, password: 'correct horse battery' })).headers.get('set-cookie')!.split(';')[0]!;
    const key = ((await (await call('POST', '/v1/api-keys', { name: 'crash', mode: 'live' }, { cookie })).json()) as { key: string }).key;
    const auth = { 'x-api-key': key };
    const orgs = (await (await fetch(`${server.base}/v1/orgs`, { headers: auth })).json()) as { orgs: { slug: string; primary: boolean }[] };
    const slug = orgs.orgs.find((o) => o.primary)!.slug;
    const patched = await call('PATCH', `/v1/orgs/${slug}`, { retention: { tracks_days: 30 } }, auth);
    assert.equal(patched.status, 200, await patched.text());
    const beacon = async (lat: number) => assert.equal((await call('POST', '/v1/signals', { type: 'beacon', lat, lng: 4, meta: { device_id: 'walker' } }, auth)).status, 201);

    // 1..20 acknowledged; wait (polling the database, no fixed sleep) until a flush wrote them.
    for (const lat of range(1, 20)) await beacon(lat);
    for (const deadline = Date.now() + 30_000; (await stored()).length < 20; ) {
      assert.ok(Date.now() < deadline, 'a flush wrote the positions within 30 s');
      await sleep(FLUSH_MS / 2);
    }
    // 21..30 with no time for a flush, then kill -9 at once.
    for (const lat of range(21, 30)) await beacon(lat);
    server.child.kill('SIGKILL');
    await server.exited;

    const dead = await stored();
    assert.deepEqual(dead.slice(0, 20), range(1, 20), 'every flushed position, once');
    assert.deepEqual(dead.slice(20), range(21, 20 + dead.length - 20), 'of the last interval, a flushed prefix at most, never twice');

    // Restarted: the instance loads which orgs keep tracks; a graceful stop writes its buffer.
    server = await start();
    for (const lat of range(31, 40)) await beacon(lat);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    assert.deepEqual((await stored()).slice(dead.length), range(31, 40), 'tracked after the restart; SIGTERM flushed');
  });
});
