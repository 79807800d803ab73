// What the track's writes cost as the stored track grows (issue #38): Muster's own database (its
// migrations, src/db/database.ts's settings) on a fresh SQLite file, one org and DEVICES people each
// with one device, and flushes of one position per device written by the recorder's own statements
// (tracks.repository.ts), as `createTrackRecorder` writes them: every flush (a second) appends to
// `track_staging`, every MOVE_EVERY flushes (a minute) the staged rows move to `position_tracks`.
// With --direct each flush inserts into `position_tracks` itself (as before migration 0050). Prints,
// per stretch of flushes, the blocked event loop per position (wall) and this thread's CPU per
// position, flushes and moves together, with the rows and file size reached.
//
//   npx tsx bench/track-growth.ts [--devices 3000] [--flushes 200] [--every 25] [--move-every 60] [--direct]
//
// Not a benchmark of the registry (bench/run.ts): a tool for the figures docs/trackers.md quotes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { flag } from '../src/db/schema.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { appendPositions, moveStaged, stagedIds } from '../src/modules/tracks/tracks.repository.js';
import { mainThreadCpuMs, numberOption } from './lib.js';

const DEVICES = numberOption('devices', 3_000);
const FLUSHES = numberOption('flushes', 200);
const EVERY = numberOption('every', 25);
/** SQLite's page cache for this run (MB); 0: as src/db/database.ts leaves it (SQLite's default, 2 MB). */
const CACHE_MB = numberOption('cache-mb', 0);
const MOVE_EVERY = numberOption('move-every', 60);
const DIRECT = process.argv.includes('--direct');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'track-growth-'));
const file = path.join(dir, 'muster.db');
const database = openDatabase({ sqliteFile: file });
try {
  await migrateToLatest(database);
  const db = database.db;
  if (CACHE_MB > 0) await sql.raw(`pragma cache_size = -${CACHE_MB * 1024}`).execute(db);
  const now = '2026-01-01T00:00:00.000Z';
  await sql`insert into users (email, name, slug, password_hash, created_at, updated_at) values ('owner@example.com', 'Owner', 'owner', 'x', ${now}, ${now})`.execute(db);
  await sql`insert into orgs (name, slug, owner_id, created_at, updated_at) values ('Fleet', 'fleet', 1, ${now}, ${now})`.execute(db);
  // DEVICES people (one device each): rows of their own, so the index by person and device spreads as in a fleet.
  for (let i = 0; i < DEVICES; i += 500) {
    const n = Math.min(500, DEVICES - i);
    await sql`insert into users (email, name, slug, password_hash, created_at, updated_at) values ${sql.join(
      Array.from({ length: n }, (_, k) => sql`(${`p${i + k}@example.com`}, ${`P ${i + k}`}, ${`p-${i + k}`}, 'x', ${now}, ${now})`),
    )}`.execute(db);
  }
  const users = (await sql<{ id: number }>`select id from users where id > 1 order by id`.execute(db)).rows.map((r) => r.id);
  console.log(`track growth: ${users.length} devices, ${FLUSHES} flushes of one position each, ${DIRECT ? 'each into position_tracks' : `staged, moved every ${MOVE_EVERY}`}, cache ${CACHE_MB || 'default'} MB, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`);
  console.log('flushes   rows stored   file MB   wall us/position   cpu us/position');
  let wall = 0;
  let cpu = 0;
  for (let f = 1; f <= FLUSHES; f++) {
    const at = new Date(Date.parse(now) + f * 1000).toISOString();
    const rows = users.map((u, k) => ({ org_id: 1, livemode: flag(true), user_id: u, device_id: 'user', lat: 52 + k / 1e5, lng: 4.9 + f / 1e6, accuracy: 10, recorded_at: at }));
    const c0 = mainThreadCpuMs();
    const t0 = performance.now();
    if (DIRECT) {
      await db.insertInto('position_tracks').values(rows.slice(0, 2_000)).execute();
      if (rows.length > 2_000) await db.insertInto('position_tracks').values(rows.slice(2_000)).execute();
    } else {
      await appendPositions(db, rows);
      if (f % MOVE_EVERY === 0) {
        const staged = await stagedIds(db);
        if (staged) await db.transaction().execute((tx) => moveStaged(tx, staged.max));
      }
    }
    wall += performance.now() - t0;
    cpu += mainThreadCpuMs() - c0;
    if (f % EVERY === 0) {
      const n = EVERY * users.length;
      const mb = (fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0)) / 1e6;
      console.log(`${String(f).padStart(7)}   ${String(f * users.length).padStart(11)}   ${mb.toFixed(0).padStart(7)}   ${((wall * 1000) / n).toFixed(1).padStart(16)}   ${((cpu * 1000) / n).toFixed(1).padStart(15)}`);
      wall = 0;
      cpu = 0;
    }
  }
} finally {
  await database.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
}
