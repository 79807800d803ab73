// The scheduled backup (BACKUP_DIR, BACKUP_INTERVAL_HOURS, BACKUP_KEEP): SQLite only, so this
// file builds SQLite instances of its own on both test runs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { ManualClock, HOUR } from '../../src/lib/clock.js';
import { defaultJobs, startJobs } from '../../src/jobs/scheduler.js';
import { ManualTicker } from '../../src/jobs/manual-ticker.js';
import { BACKUP_TICK_MS, listBackups, scheduledBackup } from '../../src/ops/scheduled-backup.js';
import { GENEROUS_RATE_LIMITS } from '../helpers.js';
import { signUp } from '../factories.js';

const TOKEN = 'metrics-token-0123456789';
const dirs: string[] = [];
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-sched-backup-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

async function startOn(env: Record<string, string>) {
  const config = loadConfig({ LOG_LEVEL: 'silent', PUBLIC_URL: 'http://muster.test', METRICS_TOKEN: TOKEN, ...GENEROUS_RATE_LIMITS, ...env });
  const clock = new ManualClock();
  const ctx = await createContext(config, { clock });
  const app = await buildApp(ctx);
  const metric = async (labels: string) => {
    const text = (await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
    const line = text.split('\n').find((l) => l.startsWith(`muster_backups_total{${labels}} `));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };
  return { app, ctx, clock, metric, close: async () => (await app.close(), await ctx.close()) };
}

describe('scheduled backup', () => {
  test('backs up when the newest backup is older than the interval, keeps BACKUP_KEEP, links uploads; outcome in metrics', async () => {
    const dataDir = tempDir();
    const backupDir = path.join(tempDir(), 'backups');
    const s = await startOn({ DATA_DIR: dataDir, BACKUP_DIR: backupDir, BACKUP_INTERVAL_HOURS: '6', BACKUP_KEEP: '2' });
    try {
      const user = await signUp(s.app, { name: 'Scheduled Backup' });
      fs.mkdirSync(path.join(dataDir, 'uploads'), { recursive: true });
      fs.writeFileSync(path.join(dataDir, 'uploads', 'abcdefghijklmnopqrstuvwx.jpg'), 'jpeg bytes');

      const first = await scheduledBackup(s.ctx);
      assert.ok(first.file, 'none yet: one now');
      const copy = new SQLite(first.file, { readonly: true });
      try {
        assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
        assert.equal((copy.prepare('select name from users where id = ?').get(user.id) as { name: string }).name, 'Scheduled Backup');
      } finally {
        copy.close();
      }
      assert.equal(fs.readFileSync(path.join(`${first.file}.uploads`, 'abcdefghijklmnopqrstuvwx.jpg'), 'utf8'), 'jpeg bytes');
      assert.equal(await s.metric('outcome="ok"'), 1);

      s.clock.advance(HOUR);
      assert.equal((await scheduledBackup(s.ctx)).file, undefined, 'within the interval: none');
      s.clock.advance(5 * HOUR);
      const second = await scheduledBackup(s.ctx);
      assert.ok(second.file);
      s.clock.advance(6 * HOUR);
      const third = await scheduledBackup(s.ctx);
      assert.deepEqual(third.pruned, [path.basename(first.file)]);
      const left = (await listBackups(backupDir)).map((b) => path.join(backupDir, b.name));
      assert.deepEqual(left, [third.file, second.file]);
      assert.equal(fs.existsSync(`${first.file}.uploads`), false, 'pruned with its uploads');
      assert.equal(await s.metric('outcome="ok"'), 3);
    } finally {
      await s.close();
    }
  });

  test('runs as a job of the scheduler (claimed per tick), and a failure is counted', async () => {
    const dataDir = tempDir();
    const backupDir = path.join(tempDir(), 'not-a-dir');
    fs.writeFileSync(backupDir, 'a file where the directory should be');
    const s = await startOn({ DATA_DIR: dataDir, BACKUP_DIR: backupDir });
    try {
      const jobs = defaultJobs(s.ctx).filter((j) => j.name === 'backup');
      assert.equal(jobs.length, 1);
      const ticker = new ManualTicker(s.clock.now().getTime());
      const stop = startJobs(s.ctx, jobs, ticker);
      await ticker.advance(BACKUP_TICK_MS);
      await stop();
      assert.equal(await s.metric('outcome="failed"'), 1);
      const text = (await s.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
      assert.match(text, /^muster_job_runs_total\{job="backup",outcome="failed"\} 1$/m);
    } finally {
      await s.close();
    }
  });

  test('no backup job without BACKUP_DIR; BACKUP_DIR with DATABASE_URL is a configuration error', async () => {
    const s = await startOn({ DATA_DIR: tempDir() });
    try {
      assert.equal(defaultJobs(s.ctx).some((j) => j.name === 'backup'), false);
    } finally {
      await s.close();
    }
    assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://x/y', BACKUP_DIR: '/tmp/b' }), (err: unknown) => err instanceof ConfigError && /pg_dump/.test(err.message));
  });
});
