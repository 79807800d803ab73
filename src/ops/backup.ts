import fs from 'node:fs';
import path from 'node:path';
import type SQLite from 'better-sqlite3';
import { lazyRequire } from '../lib/lazy-require.js';
import { runningServer } from './instance-lock.js';

// Required on use: a server imports this file (DB_FILE) at every start, on PostgreSQL too.
const sqliteDriver = lazyRequire<typeof SQLite>('better-sqlite3');

/**
 * Backups of the embedded SQLite database. A live WAL database is never copied file by file
 * (the copy can miss committed pages still in the -wal file); `VACUUM INTO` writes a consistent
 * snapshot from its own read transaction, and in WAL mode the server keeps writing meanwhile.
 * Uploads on local disk are copied beside the database as `<file>.uploads/`.
 */
export const DB_FILE = 'muster.db';
export const uploadsOf = (backupFile: string) => `${backupFile}.uploads`;

export class BackupError extends Error {}

export interface BackupResult {
  file: string;
  bytes: number;
  uploads: number;
}

function integrityOk(file: string): boolean {
  const db = new (sqliteDriver())(file, { readonly: true, fileMustExist: true });
  try {
    return db.pragma('integrity_check', { simple: true }) === 'ok';
  } finally {
    db.close();
  }
}

function copyUploads(from: string, to: string): number {
  fs.rmSync(to, { recursive: true, force: true });
  if (!fs.existsSync(from)) return 0;
  fs.cpSync(from, to, { recursive: true, errorOnExist: false });
  return fs.readdirSync(to).length;
}

/** Writes a consistent copy of DATA_DIR's database to `file` (and its uploads beside it). */
export function backupSqlite(dataDir: string, file: string): BackupResult {
  const source = path.join(dataDir, DB_FILE);
  if (!fs.existsSync(source)) throw new BackupError(`no database at ${source}`);
  const target = path.resolve(file);
  if (fs.existsSync(target)) throw new BackupError(`${target} exists; choose a new file name`);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // Written under a temporary name and renamed: a half-written backup never has the final name.
  const partial = `${target}.partial`;
  fs.rmSync(partial, { force: true });
  const db = new (sqliteDriver())(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    db.prepare('VACUUM INTO ?').run(partial);
  } finally {
    db.close();
  }
  if (!integrityOk(partial)) throw new BackupError('the copy failed its integrity check');
  fs.renameSync(partial, target);
  const uploads = copyUploads(path.join(dataDir, 'uploads'), uploadsOf(target));
  return { file: target, bytes: fs.statSync(target).size, uploads };
}

/**
 * Puts a backup in place of DATA_DIR's database while no server runs there. The files it replaces
 * are kept beside it as `*.before-restore-<time>`, so a wrong restore can be undone by hand.
 */
export function restoreSqlite(dataDir: string, file: string, now = new Date()): { replaced: string[] } {
  const pid = runningServer(dataDir);
  if (pid !== null) throw new BackupError(`a Muster server (pid ${pid}) is using ${dataDir}: stop it first`);
  const source = path.resolve(file);
  if (!fs.existsSync(source)) throw new BackupError(`no backup at ${source}`);
  let ok = false;
  try {
    ok = integrityOk(source);
  } catch {
    ok = false;
  }
  if (!ok) throw new BackupError(`${source} is not a sound SQLite database`);
  fs.mkdirSync(dataDir, { recursive: true });
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const replaced: string[] = [];
  for (const name of [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, 'uploads']) {
    const current = path.join(dataDir, name);
    if (!fs.existsSync(current)) continue;
    const aside = `${current}.before-restore-${stamp}`;
    fs.renameSync(current, aside);
    replaced.push(aside);
  }
  fs.copyFileSync(source, path.join(dataDir, DB_FILE));
  copyUploads(uploadsOf(source), path.join(dataDir, 'uploads'));
  return { replaced };
}
