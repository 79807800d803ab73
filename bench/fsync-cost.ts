// The cost of a durable commit on this disk: N one-row transactions with synchronous = FULL (one
// WAL fsync each) against one transaction of the same N rows (one fsync) and against one
// transaction of N savepoints (what a grouped commit runs). Used by the incidents benchmark; run
// alone with `npx tsx bench/fsync-cost.ts [N]` (the files live under os.tmpdir(), the data disk here).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';

export interface FsyncCost {
  n: number;
  /** ms for N commits of one row each. */
  eachMs: number;
  /** ms for one commit of N rows. */
  oneMs: number;
  /** ms for one commit of N rows, each row in its own savepoint. */
  savepointsMs: number;
}

export function fsyncCost(dir: string, n = 200): FsyncCost {
  const work = fs.mkdtempSync(path.join(dir, 'fsync-cost-'));
  const db = new SQLite(path.join(work, 't.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('create table t (id integer primary key, body text not null)');
    const ins = db.prepare('insert into t (body) values (?)');
    const body = 'x'.repeat(600); // about an incident row
    const time = (f: () => void) => {
      const t = performance.now();
      f();
      return performance.now() - t;
    };
    const eachMs = time(() => {
      for (let i = 0; i < n; i++) db.transaction(() => ins.run(body)).immediate();
    });
    const oneMs = time(() =>
      db
        .transaction(() => {
          for (let i = 0; i < n; i++) ins.run(body);
        })
        .immediate(),
    );
    const savepointsMs = time(() =>
      db
        .transaction(() => {
          for (let i = 0; i < n; i++) db.transaction(() => ins.run(body))();
        })
        .immediate(),
    );
    return { n, eachMs, oneMs, savepointsMs };
  } finally {
    db.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const c = fsyncCost(os.tmpdir(), Number(process.argv[2] ?? 500));
  process.stdout.write(
    `${c.n} commits of 1 row: ${c.eachMs.toFixed(1)} ms (${(c.eachMs / c.n).toFixed(2)} ms each); 1 commit of ${c.n} rows: ${c.oneMs.toFixed(1)} ms; ` +
      `1 commit of ${c.n} savepoints: ${c.savepointsMs.toFixed(1)} ms\n`,
  );
}
