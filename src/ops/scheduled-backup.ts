import { createRequire } from 'node:module';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AppContext } from '../context.js';
import { metricsOf } from '../modules/metrics/index.js';
import { DB_FILE, uploadsOf } from './backup.js';

/**
 * The scheduled backup (BACKUP_DIR, BACKUP_INTERVAL_HOURS, BACKUP_KEEP; SQLite only). The job
 * ticks every few minutes (and claims each tick across instances like every job) and takes a
 * backup when the newest one in BACKUP_DIR is older than the interval, so restarts never push the
 * next backup back. `VACUUM INTO` and the integrity check run in a worker thread: the server keeps
 * answering while a large database is copied. Uploads are hard-linked beside the copy (they are
 * never changed in place), copied where the link fails (another file system).
 */
export const BACKUP_TICK_MS = 5 * 60_000;
const NAME = /^muster-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)\.db$/;

const backupName = (at: Date) => `muster-${at.toISOString().replace(/[:.]/g, '-')}.db`;
const timeOf = (name: string) => {
  const m = NAME.exec(name);
  return m ? Date.parse(m[1]!.replace(/T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z$/, 'T$1:$2:$3.$4Z')) : undefined;
};

/** Backups in `dir`, newest first. */
export async function listBackups(dir: string): Promise<{ name: string; at: number }[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names
    .map((name) => ({ name, at: timeOf(name) }))
    .filter((b): b is { name: string; at: number } => b.at !== undefined)
    .sort((a, b) => b.at - a.at);
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.module);
const db = new SQLite(workerData.source, { fileMustExist: true });
try {
  db.pragma('busy_timeout = 10000');
  db.prepare('VACUUM INTO ?').run(workerData.target);
} finally {
  db.close();
}
const copy = new SQLite(workerData.target, { readonly: true, fileMustExist: true });
try {
  parentPort.postMessage(copy.pragma('integrity_check', { simple: true }));
} finally {
  copy.close();
}
`;

/** `VACUUM INTO target` and its integrity check, off the event loop. */
function vacuumInto(source: string, target: string): Promise<void> {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve, reject) => {
    let verdict: unknown;
    const worker = new Worker(WORKER, { eval: true, workerData: { module, source, target } });
    worker.on('message', (m: unknown) => {
      verdict = m;
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      if (code === 0 && verdict === 'ok') resolve();
      else reject(new Error(code === 0 ? `the copy failed its integrity check: ${String(verdict)}` : `backup worker exited with ${code}`));
    });
  });
}

async function linkUploads(from: string, to: string): Promise<number> {
  const names = await fs.readdir(from).catch(() => [] as string[]);
  const files = names.filter((n) => !n.startsWith('.tmp-'));
  if (files.length === 0) return 0;
  await fs.mkdir(to, { recursive: true });
  for (const name of files) {
    await fs.link(path.join(from, name), path.join(to, name)).catch(() => fs.copyFile(path.join(from, name), path.join(to, name)));
  }
  return files.length;
}

/** Takes one backup into `dir` now; answers its file. */
export async function backupInto(dataDir: string, dir: string, at: Date): Promise<{ file: string; uploads: number }> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, backupName(at));
  const partial = `${file}.partial`;
  await fs.rm(partial, { force: true });
  try {
    await vacuumInto(path.join(dataDir, DB_FILE), partial);
    await fs.rename(partial, file);
  } catch (err) {
    await fs.rm(partial, { force: true });
    throw err;
  }
  return { file, uploads: await linkUploads(path.join(dataDir, 'uploads'), uploadsOf(file)) };
}

/** Removes all but the newest `keep` backups (and their uploads). */
export async function pruneBackups(dir: string, keep: number): Promise<string[]> {
  const old = (await listBackups(dir)).slice(keep);
  for (const b of old) {
    await fs.rm(path.join(dir, b.name), { force: true });
    await fs.rm(uploadsOf(path.join(dir, b.name)), { recursive: true, force: true });
  }
  return old.map((b) => b.name);
}

/** The job: a backup when the newest is older than the interval, then pruning; outcome in metrics. */
export async function scheduledBackup(ctx: AppContext): Promise<{ file?: string; pruned: string[] }> {
  const { backupDir, backupIntervalMs, backupKeep } = ctx.config.ops;
  if (!backupDir || ctx.database.dialect !== 'sqlite') return { pruned: [] };
  const now = ctx.clock.now();
  const newest = (await listBackups(backupDir))[0];
  const m = metricsOf(ctx);
  if (newest) m.lastBackup.set(newest.at / 1000);
  // A little slack, so a backup due at the tick is not put off by one tick.
  if (newest && now.getTime() - newest.at < backupIntervalMs - BACKUP_TICK_MS / 2) return { pruned: [] };
  try {
    const r = await backupInto(ctx.config.dataDir, backupDir, now);
    m.backups.inc({ outcome: 'ok' });
    m.lastBackup.set(now.getTime() / 1000);
    const pruned = await pruneBackups(backupDir, backupKeep);
    ctx.log.info({ file: r.file, uploads: r.uploads, pruned: pruned.length }, 'scheduled backup written');
    return { file: r.file, pruned };
  } catch (err) {
    m.backups.inc({ outcome: 'failed' });
    throw err;
  }
}
