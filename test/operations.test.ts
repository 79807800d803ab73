import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { entryArgs } from './entry.js';
import { body, buildTestApp, dropTestSchema, testSchemaName } from './helpers.js';

// The real process: `src/server.ts` as `npm start` runs it (through tsx instead of the build).

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  // Up to 30 s: a loaded CI machine can take 10 s or more to start tsx and migrate.
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('server did not become ready');
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

describe('operations', () => {
  const dirs: string[] = [];
  const schemas: string[] = [];
  after(async () => {
    dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
    for (const s of schemas) await dropTestSchema(s);
  });

  /** On a PostgreSQL run, a schema of its own that the server creates at boot. */
  function dbEnv(name: string): Record<string, string> {
    if (!process.env.TEST_DATABASE_URL) return {};
    const schema = testSchemaName(name);
    schemas.push(schema);
    return { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: schema };
  }

  async function startServer(env: Record<string, string> = {}) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-proc-'));
    dirs.push(dataDir);
    const port = await freePort();
    const child = spawn(process.execPath, entryArgs('src/server.ts'), {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...dbEnv('p'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const url = `http://127.0.0.1:${port}`;
    return { child, url, port, dataDir, output: () => output };
  }

  test('boots on the embedded SQLite with nothing else configured and answers /healthz and /readyz', async () => {
    const s = await startServer();
    try {
      await waitReady(s.url, s.child);
      const ready = await fetch(`${s.url}/readyz`);
      assert.equal(ready.status, 200);
      const b = (await ready.json()) as { status: string; database: string };
      assert.equal(b.status, 'ready');
      assert.equal(b.database, process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite');
      assert.equal((await fetch(`${s.url}/healthz`)).status, 200);
      if (!process.env.TEST_DATABASE_URL) assert.ok(fs.existsSync(path.join(s.dataDir, 'muster.db')), 'the database file lives under DATA_DIR');
      // The ready line carries the start's steps in ms (the cold-start benchmark reads them). It may
      // reach the pipe just after /readyz's first 200.
      let line: string | undefined;
      for (let i = 0; i < 100 && !line; i++) {
        line = s.output().split('\n').find((l) => l.includes('Muster is ready'));
        if (!line) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(line, `no ready line in:\n${s.output()}`);
      const { startMs } = JSON.parse(line) as { startMs: Record<string, unknown> };
      assert.deepEqual(Object.keys(startMs), ['import', 'context', 'app', 'listen']);
      for (const v of Object.values(startMs)) assert.ok(typeof v === 'number' && v >= 0, `startMs ${JSON.stringify(startMs)}`);
    } finally {
      s.child.kill('SIGKILL');
    }
  });

  test('slow clients: headers are cut at HEADERS_TIMEOUT_MS and bodies at REQUEST_TIMEOUT_MS, within a tenth of each (issue #31)', async () => {
    // The smallest allowed figures; by default 10 s and 30 s, checked every second.
    const s = await startServer({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
    try {
      await waitReady(s.url, s.child);
      /** Sends `text` and keeps the socket open; answers what came back and after how long the server ended it. */
      const slow = (text: string) =>
        new Promise<{ ms: number; reply: string }>((resolve, reject) => {
          const started = Date.now();
          let reply = '';
          const socket = net.connect(s.port, '127.0.0.1', () => socket.write(text));
          socket.on('data', (d: Buffer) => (reply += d.toString()));
          socket.on('close', () => resolve({ ms: Date.now() - started, reply }));
          socket.on('error', reject);
        });
      const [headers, body] = await Promise.all([
        slow('GET /healthz HTTP/1.1\r\nHost: muster.test\r\nX-Slow: '),
        slow('POST /v1/auth/login HTTP/1.1\r\nHost: muster.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":'),
      ]);
      for (const [what, r, limit] of [['headers', headers, 1000], ['body', body, 2000]] as const) {
        assert.match(r.reply, /^HTTP\/1\.1 408 /, `${what}: ${r.reply}`);
        // Node checks every 100 ms at these figures (a tenth of the headers' timeout); 30 s before.
        assert.ok(r.ms >= limit - 50 && r.ms < limit + 1_500, `${what}: cut after ${r.ms} ms (timeout ${limit} ms)`);
      }
    } finally {
      s.child.kill('SIGKILL');
    }
  });

  test('SIGTERM lets an in-flight request finish, then exits 0', async () => {
    const s = await startServer();
    await waitReady(s.url, s.child);
    const payload = JSON.stringify({ email: 'inflight@example.com', password: 'correct horse', name: 'In Flight' });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${s.url}/v1/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      });
      req.on('response', (res) => {
        let data = '';
        res.on('data', (c: Buffer) => (data += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      });
      req.on('error', reject);
      // Half the body now; the signal arrives while the request is in flight; the rest after.
      req.write(payload.slice(0, 20));
      setTimeout(() => {
        s.child.kill('SIGTERM');
        setTimeout(() => req.end(payload.slice(20)), 300);
      }, 200);
    });
    const res = await response;
    assert.equal(res.status, 201, res.body);
    assert.equal(await exited(s.child), 0);
    assert.match(s.output(), /shutting down/);
    assert.match(s.output(), /"msg":"stopped"/);
  });

  test('with INBOUND_SMTP_PORT the server listens for mail, and SIGTERM stops the listener too', async () => {
    const smtpPort = await freePort();
    const s = await startServer({ INBOUND_SMTP_PORT: String(smtpPort), INBOUND_SMTP_HOST: '127.0.0.1', INBOUND_EMAIL_DOMAIN: 'in.muster.test' });
    await waitReady(s.url, s.child);
    const greeting = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(smtpPort, '127.0.0.1');
      socket.once('data', (d: Buffer) => {
        resolve(d.toString());
        socket.end();
      });
      socket.once('error', reject);
    });
    assert.match(greeting, /^220 /);
    s.child.kill('SIGTERM');
    assert.equal(await exited(s.child), 0);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(smtpPort, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    assert.ok(refused, 'the SMTP port is closed after the stop');
  });

  test('a bad configuration stops the boot with a clear message and exit code 1', () => {
    const r = spawnSync(process.execPath, entryArgs('src/server.ts'), {
      env: { ...process.env, PORT: 'not-a-port', DATABASE_URL: 'mysql://nope', DATA_DIR: os.tmpdir() },
      encoding: 'utf8',
    });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /Invalid configuration/);
    assert.match(r.stderr, /PORT must be an integer from 1 to 65535 \(got "not-a-port"\)/);
    assert.match(r.stderr, /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
  });

  test('npm run db:migrate applies the migrations and is idempotent', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-migrate-'));
    dirs.push(dataDir);
    const env = dbEnv('m');
    const run = () =>
      spawnSync(process.execPath, entryArgs('src/db/migrate-cli.ts'), { env: { ...process.env, DATA_DIR: dataDir, ...env }, encoding: 'utf8' });
    const first = run();
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /applied: 0001-foundation/);
    const second = run();
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /database is up to date/);
  });

  test('/readyz answers 503 when the database is gone', async () => {
    const t = await buildTestApp();
    try {
      await t.ctx.database.destroy();
      const res = await t.app.inject({ url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(body(res), { error: 'Database unavailable', code: 'not_ready' });
      assert.equal((await t.app.inject({ url: '/healthz' })).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
