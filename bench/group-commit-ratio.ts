// Grouped commits against one transaction per write, in one process on one SQLite file each:
// `workers` loops, each awaiting one transaction (an org row) after another for `seconds`, like
// `workers` HTTP connections without the HTTP. `npx tsx bench/group-commit-ratio.ts [workers] [seconds]`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { transactionRunner, withTransaction, type Tx } from '../src/db/transaction.js';
import { insertOrg } from '../src/modules/orgs/orgs.repository.js';

const WORKERS = Number(process.argv[2] ?? 10);
const SECONDS = Number(process.argv[3] ?? 3);

async function measure(grouped: boolean): Promise<{ perSec: number; commits: number; writes: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-groupratio-'));
  let commits = 0;
  const database = openDatabase({ sqliteFile: path.join(dir, 'muster.db'), onQuery: (q) => void (/^commit$/i.test(q) && (commits += 1)) });
  try {
    await migrateToLatest(database);
    const fail = (err: unknown) => {
      throw err;
    };
    const run: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T> = grouped
      ? ((r) => (fn) => r.run(fn))(transactionRunner(database, fail))
      : (fn) => withTransaction(database.db, fn, fail);
    commits = 0;
    let writes = 0;
    let n = 0;
    const until = performance.now() + SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (performance.now() < until) {
          const slug = `o-${(n += 1)}`;
          await run((tx) => insertOrg(tx.db, { name: slug, slug, description: null, personal: 0, created_at: new Date().toISOString() }));
          writes += 1;
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    return { perSec: writes / secs, commits, writes };
  } finally {
    await database.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

for (let round = 1; round <= 2; round++) {
  const one = await measure(false);
  const grouped = await measure(true);
  process.stdout.write(
    `round ${round}, ${WORKERS} writers: one commit each ${one.perSec.toFixed(0)} writes/s (${one.commits} commits); grouped ${grouped.perSec.toFixed(0)} writes/s ` +
      `(${grouped.writes} writes in ${grouped.commits} commits, ${(grouped.writes / Math.max(1, grouped.commits)).toFixed(1)} per commit); ratio ${(grouped.perSec / one.perSec).toFixed(1)}x\n`,
  );
}
