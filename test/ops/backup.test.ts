import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { entryArgs, REPO_ROOT } from '../entry.js';
import { GENEROUS_RATE_LIMITS } from '../helpers.js';
import { signUp } from '../factories.js';

// The backup commands are for the embedded SQLite database, so this file builds SQLite instances
// of its own on both test runs; under PostgreSQL the commands point to pg_dump (last test).
const dirs: string[] = [];
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-backup-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** Runs `npm run db:<command> -- file` as the operator would (the same script, its own process). */
function cli(command: 'backup' | 'restore', file: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entryArgs('src/ops/backup-cli.ts'), command, file], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? 1, out }));
  });
}

async function startOn(dataDir: string) {
  const config = loadConfig({ LOG_LEVEL: 'silent', PUBLIC_URL: 'http://muster.test', DATA_DIR: dataDir, ...GENEROUS_RATE_LIMITS });
  const ctx = await createContext(config);
  const app = await buildApp(ctx);
  return { app, ctx, close: async () => (await app.close(), await ctx.close()) };
}

describe('npm run db:backup / db:restore (SQLite)', () => {
  test('a backup taken under write load restores into a fresh directory with every write acknowledged before it', async () => {
    const live = tempDir();
    const server = await startOn(live);
    const user = await signUp(server.app, { name: 'Backup Tester' });
    fs.mkdirSync(path.join(live, 'uploads'), { recursive: true });
    fs.writeFileSync(path.join(live, 'uploads', 'abcdefghijklmnopqrstuvwx.jpg'), 'jpeg bytes');

    const acknowledged: number[] = [];
    let writing = true;
    let failures = 0;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        const res = await server.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: user.cookie }, payload: { title: `load ${n}` } });
        if (res.statusCode === 201) acknowledged.push(res.json<{ Id: number }>().Id);
        else failures++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    while (acknowledged.length < 50) await new Promise((r) => setTimeout(r, 5));
    const beforeBackup = [...acknowledged];
    const file = path.join(tempDir(), 'nightly', 'muster.db');
    const backup = await cli('backup', file, { DATA_DIR: live });
    writing = false;
    await writer;
    await server.close();
    assert.equal(backup.code, 0, backup.out);
    assert.equal(failures, 0, 'the server kept answering 201 while the backup ran');
    assert.ok(acknowledged.length > beforeBackup.length, 'writes went on during the backup');
    assert.ok(fs.existsSync(path.join(`${file}.uploads`, 'abcdefghijklmnopqrstuvwx.jpg')));

    const fresh = path.join(tempDir(), 'restored');
    const restore = await cli('restore', file, { DATA_DIR: fresh });
    assert.equal(restore.code, 0, restore.out);
    const db = new SQLite(path.join(fresh, 'muster.db'), { readonly: true });
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.close();
    assert.equal(fs.readFileSync(path.join(fresh, 'uploads', 'abcdefghijklmnopqrstuvwx.jpg'), 'utf8'), 'jpeg bytes');

    const restored = await startOn(fresh);
    try {
      const login = await restored.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: user.email, password: user.password } });
      assert.equal(login.statusCode, 200, login.body);
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      const missing: number[] = [];
      for (const id of beforeBackup) {
        if ((await restored.app.inject({ url: `/v1/tickets/${id}`, headers: { cookie } })).statusCode !== 200) missing.push(id);
      }
      assert.deepEqual(missing, [], 'every write acknowledged before the backup started is in it');
    } finally {
      await restored.close();
    }
  });

  test('restore refuses while a server runs on the directory, and keeps what it replaces', async () => {
    const live = tempDir();
    const server = await startOn(live);
    await signUp(server.app);
    await server.close();
    const file = path.join(tempDir(), 'b.db');
    assert.equal((await cli('backup', file, { DATA_DIR: live })).code, 0);
    assert.equal((await cli('backup', file, { DATA_DIR: live })).code, 1, 'an existing backup is never overwritten');

    // Another live process holds the directory (as src/server.ts does at start).
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    fs.writeFileSync(path.join(live, 'muster.pid'), `${holder.pid}\n`);
    try {
      const refused = await cli('restore', file, { DATA_DIR: live });
      assert.equal(refused.code, 1);
      assert.match(refused.out, new RegExp(`server \\(pid ${holder.pid}\\).*stop it first`));
    } finally {
      holder.kill();
      await new Promise((r) => holder.once('exit', r));
    }
    // Once that process is gone its pid file no longer blocks.
    const done = await cli('restore', file, { DATA_DIR: live });
    assert.equal(done.code, 0, done.out);
    assert.ok(fs.readdirSync(live).some((f) => f.startsWith('muster.db.before-restore-')));
  });

  test('a file that is not a SQLite database is refused; on PostgreSQL the commands point to pg_dump', async () => {
    const bogus = path.join(tempDir(), 'not-a-db.db');
    fs.writeFileSync(bogus, 'hello');
    const refused = await cli('restore', bogus, { DATA_DIR: tempDir() });
    assert.equal(refused.code, 1);
    assert.match(refused.out, /not a sound SQLite database/);
    const pg = await cli('backup', path.join(tempDir(), 'x.db'), { DATA_DIR: tempDir(), DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' });
    assert.equal(pg.code, 1);
    assert.match(pg.out, /pg_dump/);
  });
});
