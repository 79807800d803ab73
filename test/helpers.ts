import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext, type AppContext, type ContextOverrides } from '../src/context.js';
import type { DialectName } from '../src/db/database.js';
import type { DB } from '../src/db/schema.js';
import { ManualClock } from '../src/lib/clock.js';
import { createPasswordHasher } from '../src/lib/passwords.js';
import pino from 'pino';
import { installResponseCheck } from './response-check.js';

/** The engine this test run uses: PostgreSQL when TEST_DATABASE_URL is set, else SQLite. */
export const testDialect: DialectName = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  clock: ManualClock;
  close(): Promise<void>;
}

/**
 * A PostgreSQL schema name for one test database. Under `npm run test:pg` every name carries the
 * run's id and the runner drops them all once the run is over: a schema dropped while another
 * file's migrator lists the tables of every schema would make that listing fail.
 */
export function testSchemaName(prefix = 't'): string {
  const run = process.env.TEST_RUN_ID;
  return `${prefix}_${run ? `${run}_` : ''}${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Drops a test schema now when the file runs alone; under the runner, the runner drops it later. */
export async function dropTestSchema(schema: string): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url || process.env.TEST_RUN_ID) return;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`drop schema if exists ${schema} cascade`);
  await c.end();
}

/** A fresh database for one test file: a temp SQLite file, or a new PostgreSQL schema. */
async function freshDatabaseEnv(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-test-'));
  const removeDir = () => fs.rmSync(dataDir, { recursive: true, force: true });
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return { env: { DATA_DIR: dataDir }, drop: () => Promise.resolve(removeDir()) };
  // The server creates its schema at boot (DATABASE_SCHEMA).
  const schema = testSchemaName();
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: url, DATABASE_SCHEMA: schema },
    drop: async () => {
      await dropTestSchema(schema);
      removeDir();
    },
  };
}

/**
 * Tests send many requests from one address within one minute of a clock that stands still:
 * limits high enough never to be met, unless a test sets its own (test/security/rate-limit.test.ts).
 */
export const GENEROUS_RATE_LIMITS = { RATE_LIMIT_API: '1000000', RATE_LIMIT_AUTH: '1000000', RATE_LIMIT_BOOKING: '1000000', RATE_LIMIT_PUBLIC: '1000000', RATE_LIMIT_ACCOUNT: '1000000' };

/**
 * Reports whose every request computes its answer, none stored whatever its time (modules/reports,
 * stored-results.ts): for tests that read figures after writing or moving the clock.
 */
export const REPORTS_COMPUTED_EVERY_TIME = { REPORT_STORE_AFTER_MS: '3600000' };

/**
 * Argon2id at 1 MiB and one pass for the tests' thousands of sign-ups and logins (OWASP's 19 MiB and two
 * passes cost ~30 ms of CPU each; src/modules/users/users.test.ts checks that the service keeps those). The same
 * library and code path: a stored hash carries its cost, and verify reads it.
 */
export const testPasswords = createPasswordHasher({ memoryCost: 1024, timeCost: 1 });

/** The context behind each test app, so factories can read what the app emailed (its outbox). */
export const testContexts = new WeakMap<FastifyInstance, AppContext>();

/** A migrated app on its own database with a clock the test sets. Extra env goes through loadConfig. */
export async function buildTestApp(env: Record<string, string> = {}, overrides: ContextOverrides = {}): Promise<TestApp> {
  const database = await freshDatabaseEnv();
  const config = loadConfig({ LOG_LEVEL: 'silent', PUBLIC_URL: 'http://muster.test', ...GENEROUS_RATE_LIMITS, ...database.env, ...env });
  const clock = new ManualClock();
  const ctx = await createContext(config, { clock, passwords: testPasswords, ...overrides });
  const app = await buildApp(ctx);
  testContexts.set(app, ctx);
  // Every answer is checked against its documented schema; a mismatch fails the file at close().
  const responses = installResponseCheck(app);
  let closed = false;
  return {
    app,
    ctx,
    clock,
    close: async () => {
      if (closed) return;
      closed = true;
      await app.close();
      await ctx.close();
      await database.drop();
      if (responses.problems.length > 0) throw new Error(`responses that do not match the API description (src/**/*.schemas.ts):\n  ${responses.problems.join('\n  ')}`);
    },
  };
}

/**
 * Another instance on a test app's database, on its clock: a second context on PostgreSQL; on SQLite,
 * one instance by design (better-sqlite3 blocks the thread while it waits for a lock, so two in one
 * process would wait on each other), the app's own, so races there are between concurrent runs of one
 * instance. `close` ends only what this made.
 */
export async function secondInstance(t: Pick<TestApp, 'ctx' | 'clock'>): Promise<{ ctx: AppContext; close: () => Promise<void> }> {
  if (testDialect !== 'postgres') return { ctx: t.ctx, close: async () => {} };
  const ctx = await createContext(t.ctx.config, { log: pino({ level: 'silent' }), clock: t.clock, passwords: testPasswords });
  return { ctx, close: () => ctx.close() };
}

/** A fresh context on a test app's database, as the service after a restart (both engines). */
export function restartedContext(t: Pick<TestApp, 'ctx' | 'clock'>): Promise<AppContext> {
  return createContext(t.ctx.config, { log: pino({ level: 'silent' }), clock: t.clock, passwords: testPasswords });
}

/** The parsed JSON body of an injected response. */
export function body<T = Record<string, unknown>>(res: LightMyRequestResponse): T {
  return res.json<T>();
}

type Payload = Record<string, unknown>;
/** Request headers as tests send them. */
export type Headers = Record<string, string>;
/** The methods tests call the API with. */
export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * Requests injected into the app `app()` returns (a getter: test files build theirs in before()):
 * `send` answers the response, `ok` the JSON of a 2xx answer and fails the test on anything else.
 */
export function injector(app: () => FastifyInstance) {
  const send = (method: string, url: string, headers: Headers, payload?: Payload) =>
    app().inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
  async function ok<T = Payload>(method: string, url: string, headers: Headers, payload?: Payload): Promise<T> {
    const res = await send(method, url, headers, payload);
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json<T>();
  }
  return { send, ok };
}

/**
 * The plan of a query as text: SQLite's EXPLAIN QUERY PLAN, or PostgreSQL's EXPLAIN with one kind of
 * step priced out for the statement (`set local <pgOff> = off`): a test's few rows make a sequential
 * scan or a sort the cheapest plan, where a million rows would not.
 */
export async function queryPlan(db: Kysely<DB>, q: CompiledQuery, pgOff: 'enable_sort' | 'enable_seqscan'): Promise<string> {
  const explain = (prefix: string) => CompiledQuery.raw(prefix + q.sql, [...q.parameters]);
  if (testDialect === 'sqlite') {
    const { rows } = await db.executeQuery<{ detail: string }>(explain('explain query plan '));
    return rows.map((r) => r.detail).join('\n');
  }
  return db.transaction().execute(async (trx) => {
    await sql`set local ${sql.raw(pgOff)} = off`.execute(trx);
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(explain('explain '));
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}
