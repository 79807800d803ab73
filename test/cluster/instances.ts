import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './redis-server.js';
import { entryArgs } from '../entry.js';
import type { Headers } from '../helpers.js';

// Real server processes (`src/server.ts` through tsx, as `npm run dev` runs it) sharing one
// database and one Redis, plus a small JSON client for them.

export interface Instance {
  name: string;
  port: number;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `muster-${name}-`));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, entryArgs('src/server.ts'), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const instance: Instance = {
    name,
    port,
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`instance ${name} exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return instance;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await instance.stop();
  throw new Error(`instance ${name} did not become ready:\n${output}`);
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: globalThis.Headers;
}

/** A JSON request to an instance. */
export async function call<T = Record<string, unknown>>(at: Instance, method: string, url: string, headers: Headers = {}, payload?: unknown): Promise<Answer<T>> {
  const res = await fetch(`${at.url}${url}`, {
    method,
    headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T, headers: res.headers };
}

/** Like call(), asserting the status. */
export async function ok<T = Record<string, unknown>>(status: number, at: Instance, method: string, url: string, headers: Headers = {}, payload?: unknown): Promise<T> {
  const res = await call<T>(at, method, url, headers, payload);
  assert.equal(res.status, status, `${method} ${url} on ${at.name}: ${JSON.stringify(res.body)}`);
  return res.body;
}

let seq = 0;

export interface ClusterUser {
  id: number;
  name: string;
  slug: string;
  cookie: string;
  live: Headers;
  test: Headers;
  org: number;
}

/** Registers a user on one instance, logs in on the other, and makes a live and a test key. */
export async function newUser(register: Instance, other: Instance, name: string): Promise<ClusterUser> {
  seq += 1;
  const email = `${name.toLowerCase()}-${process.pid}-${seq}@example.com`;
  const password = 'correct horse battery';
  const user = await ok<{ id: number; slug: string }>(201, register, 'POST', '/v1/users', {}, { email, password, name });
  const login = await call(other, 'POST', '/v1/auth/login', {}, { email, password });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('muster_session='))!.split(';')[0]!;
  const key = async (mode: 'live' | 'test') => (await ok<{ key: string }>(201, register, 'POST', '/v1/api-keys', { cookie }, { name: mode, mode })).key;
  const orgs = await ok<{ orgs: { id: number; primary: boolean }[] }>(200, other, 'GET', '/v1/orgs', { cookie });
  return { id: user.id, name, slug: user.slug, cookie, live: { 'x-api-key': await key('live') }, test: { 'x-api-key': await key('test') }, org: orgs.orgs.find((o) => o.primary)!.id };
}

export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The environment of two instances sharing a PostgreSQL schema and a test's own Redis; `extra` on top. */
export function clusterEnv(databaseUrl: string, schema: string, redis: { url: string; prefix: string }, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    DATABASE_SCHEMA: schema,
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    PUBLIC_URL: 'http://muster.test',
    // Everything comes from one address; the limits are not what these tests are about.
    RATE_LIMIT_API: '1000000',
    RATE_LIMIT_AUTH: '1000000',
    RATE_LIMIT_BOOKING: '1000000',
    RATE_LIMIT_PUBLIC: '1000000',
    ...extra,
  };
}
