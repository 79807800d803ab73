// A real Muster server process for the kill -9 tests (beacon state, tracks): started on its own
// data directory and database (SQLite there, or a PostgreSQL schema), ready when /readyz says so.
import { spawn, type ChildProcess } from 'node:child_process';
import { entryArgs } from './entry.js';
import { freePort } from './ports.js';

export interface Server {
  child: ChildProcess;
  base: string;
  exited: Promise<number | null>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `src/server.ts` with no Redis and generous rate limits; `pg` names the database and schema when the test runs on PostgreSQL. */
export async function startServer(o: { dataDir: string; flushMs: number; trackMoveMs?: number; pg?: { url: string; schema: string } }): Promise<Server> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: o.dataDir,
    PUBLIC_URL: base,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_API: '1000000',
    RATE_LIMIT_AUTH: '1000000',
    BEACON_FLUSH_MS: String(o.flushMs),
    ...(o.trackMoveMs === undefined ? {} : { TRACK_MOVE_MS: String(o.trackMoveMs) }),
  };
  delete env.DATABASE_URL;
  delete env.DATABASE_SCHEMA;
  delete env.REDIS_URL;
  if (o.pg) Object.assign(env, { DATABASE_URL: o.pg.url, DATABASE_SCHEMA: o.pg.schema });
  const child = spawn(process.execPath, entryArgs('src/server.ts'), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  child.stderr.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    if (child.exitCode !== null) throw new Error(`server exited at start (${child.exitCode}):\n${out}`);
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return { child, base, exited };
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`server did not get ready:\n${out}`);
}

/** Kills a server still running (SIGKILL) and waits for it to be gone. */
export async function killServer(server: Server | undefined): Promise<void> {
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}
