// The cost of a durable commit on this disk: N one-row transactions with synchronous = FULL
// (one WAL fsync each) against one transaction of the same N rows (one fsync), plus NORMAL for
// reference. `npx tsx bench/fsync-cost.ts [N]`; the file lives under os.tmpdir() (the data disk here).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';

const N = Number(process.argv[2] ?? 500);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-fsync-'));

function open(sync: 'FULL' | 'NORMAL'): SQLite.Database {
  const db = new SQLite(path.join(dir, `t-${sync}-${Math.random()}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync}`);
  db.exec('create table t (id integer primary key, body text not null)');
  return db;
}

function time(label: string, f: () => void): number {
  const t = performance.now();
  f();
  const ms = performance.now() - t;
  process.stdout.write(`${label.padEnd(48)} ${ms.toFixed(1).padStart(9)} ms  ${((ms * 1000) / N).toFixed(1).padStart(8)} us/row\n`);
  return ms;
}

try {
  const body = 'x'.repeat(600); // about an incident row
  for (const sync of ['FULL', 'NORMAL'] as const) {
    const db = open(sync);
    const ins = db.prepare('insert into t (body) values (?)');
    const each = time(`${N} commits of 1 row, synchronous=${sync}`, () => {
      for (let i = 0; i < N; i++) db.transaction(() => ins.run(body)).immediate();
    });
    const one = time(`1 commit of ${N} rows, synchronous=${sync}`, () => {
      db.transaction(() => {
        for (let i = 0; i < N; i++) ins.run(body);
      }).immediate();
    });
    const sp = time(`1 commit of ${N} rows, one SAVEPOINT each, ${sync}`, () => {
      db.transaction(() => {
        for (let i = 0; i < N; i++) db.transaction(() => ins.run(body))();
      }).immediate();
    });
    process.stdout.write(`  per commit: ${((each - one) / N).toFixed(3)} ms; savepoint overhead per row: ${(((sp - one) * 1000) / N).toFixed(1)} us\n`);
    db.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
