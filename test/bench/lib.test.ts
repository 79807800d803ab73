import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { liveKey, startMuster, type MusterServer } from '../../bench/lib.js';
import { dropTestSchema, testSchemaName } from '../helpers.js';

// Every benchmark starts Muster through lib's startMuster. Its configuration must load (rate limits of
// 100000000 did not: `npm run bench` failed before measuring) and no benchmark's load may meet a rate
// limit (the scheduling benchmark, on a configuration of its own, got 429 after 300 public requests).
describe('a benchmarked Muster', () => {
  let m: MusterServer;
  const url = process.env.TEST_DATABASE_URL;
  const schema = testSchemaName('bench');
  before(async () => {
    m = await startMuster(url ? { DATABASE_URL: url, DATABASE_SCHEMA: schema } : {});
  });
  after(async () => {
    await m.close();
    if (url) await dropTestSchema(schema);
  });

  const statuses = async (n: number, request: () => Promise<number>) => {
    const seen = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const status = await request();
      seen.set(status, (seen.get(status) ?? 0) + 1);
    }
    return Object.fromEntries(seen);
  };

  test('answers more requests of every rate-limit group than the defaults allow, with the limiter still counting', async () => {
    const headers = { 'x-api-key': await liveKey(m.app) };
    // Defaults: 600 authenticated requests a minute per user, 300 public and 10 sign-in attempts per address.
    assert.deepEqual(await statuses(700, async () => (await m.app.inject({ url: '/v1/auth/me', headers })).statusCode), { 200: 700 });
    const slots = () => m.app.inject({ url: '/v1/slots/nobody/nothing?date=2030-01-07' });
    assert.deepEqual(await statuses(400, async () => (await slots()).statusCode), { 404: 400 });
    const login = () => m.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: 'bench@example.com', password: 'not the password' } });
    assert.deepEqual(await statuses(20, async () => (await login()).statusCode), { 401: 20 });
    // Counting stays on (its cost is part of every figure), at the ceiling the configuration accepts.
    assert.equal((await slots()).headers['ratelimit-limit'], '1000000');
  });
});
