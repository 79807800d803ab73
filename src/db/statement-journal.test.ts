import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase, type Database } from './database.js';
import { transactionRunner } from './transaction.js';

/** Files SQLite opened as temp files (its `etilqs_` prefix) that this process holds open now (Linux /proc). */
function sqliteTempFiles(): string[] {
  const held: string[] = [];
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (path.basename(target).startsWith('etilqs_')) held.push(target);
    } catch {
      // closed meanwhile (the readdir's own fd)
    }
  }
  return held;
}

const ROWS = 200;
const fill = (db: SQLite.Database) => {
  db.exec('create table sj_rows (id integer primary key, body text not null)');
  const insert = db.prepare('insert into sj_rows (body) values (?)');
  for (let i = 0; i < ROWS; i++) insert.run('x'.repeat(1000));
};

// The SQLite file database as database.ts opens it, in both suites (it is SQLite's own setting): a member
// of a group of commits runs in a SAVEPOINT, whose statement journal (the old copy of every page the
// member changes) SQLite spills to a temp file past 64 KiB unless `temp_store = MEMORY`.
describe('statement journals of a SQLite file database', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-sj-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('without temp_store = MEMORY, a savepoint that changes 200 KB of pages holds a temp file (the probe sees it)', () => {
    const db = new SQLite(path.join(dir, 'default.db'));
    try {
      db.pragma('journal_mode = WAL');
      fill(db);
      db.exec('begin immediate; savepoint s');
      db.exec("update sj_rows set body = 'y' || substr(body, 2)");
      const held = sqliteTempFiles();
      db.exec('release s; commit');
      assert.ok(held.length >= 1, 'SQLite spilled the statement journal to a temp file');
    } finally {
      db.close();
    }
  });

  test('a member of a group of commits that changes 200 KB of pages opens no temp file', async () => {
    const database: Database = openDatabase({ sqliteFile: path.join(dir, 'muster.db') });
    try {
      await sql.raw('create table sj_rows (id integer primary key, body text not null)').execute(database.db);
      await sql`insert into sj_rows (body) select ${'x'.repeat(1000)} from (with recursive n(i) as (select 1 union all select i + 1 from n where i < ${ROWS}) select i from n)`.execute(database.db);
      const groups: number[] = [];
      const runner = transactionRunner(database, (err) => assert.fail(String(err)), { onGroup: (n) => groups.push(n) });
      const seen: string[][] = [];
      const member = (letter: string) =>
        runner.run(async (tx) => {
          await sql`update sj_rows set body = ${letter} || substr(body, 2)`.execute(tx.db);
          seen.push(sqliteTempFiles());
        });
      // Queued in one turn: one group of two, each member in its own SAVEPOINT.
      await Promise.all([member('a'), member('b')]);
      assert.deepEqual(groups, [2]);
      assert.deepEqual(seen, [[], []]);
      const rows = await sql<{ n: number }>`select count(*) as n from sj_rows where body like 'b%'`.execute(database.db);
      assert.equal(rows.rows[0]?.n, ROWS);
    } finally {
      await database.destroy();
    }
  });
});
