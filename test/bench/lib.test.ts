import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { liveKey, load, startMuster, type MusterServer } from '../../bench/lib.js';
import { sequenceFrom } from '../../bench/load-worker.js';
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

// The tracker benchmark's load: each of the 10 connections is its own phone, its token in the URL.
describe('a benchmark load with a per-connection placeholder', () => {
  test('sends each connection its own value in the path and the body, never the placeholder itself; refuses a placeholder it cannot place', async () => {
    const seen = new Map<string, number>();
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? 'none';
        const key = `${id}|${body}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        res.writeHead(200, { 'content-length': 0 });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const values = Array.from({ length: 10 }, (_, i) => `phone-${i}`);
      const { port } = server.address() as AddressInfo;
      await load({ url: `http://127.0.0.1:${port}/fix?id=[v]&lat=1`, method: 'POST', body: { device: '[v]' }, connectionPlaceholder: '[v]', connectionValues: values, seconds: 1 });
      const pairs = [...seen.keys()].sort();
      assert.deepEqual(pairs, values.map((v) => `${v}|{"device":"${v}"}`).sort());
      // A placeholder that is nowhere, or fewer values than connections, is refused before any load.
      await assert.rejects(load({ url: `http://127.0.0.1:${port}/fix?id=x`, connectionPlaceholder: '[v]', seconds: 1 }), /neither the URL nor the body/);
      await assert.rejects(load({ url: `http://127.0.0.1:${port}/fix?id=[v]`, connectionPlaceholder: '[v]', connectionValues: values.slice(0, 3), seconds: 1 }), /3 connectionValues for 10 connections/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

// The beacons-watch benchmark's load: thousands of devices, each request the next device's fix.
describe('a benchmark load with a per-request sequence', () => {
  test('takes the values in turn from where it starts, wrapping around', () => {
    const next = sequenceFrom(3, 5);
    assert.deepEqual(Array.from({ length: 7 }, next), [3, 4, 0, 1, 2, 3, 4]);
  });

  test('sends every value about equally often, each request the next one, with the connection placeholder inside it replaced too; refuses a sequence it cannot place', async () => {
    const counts = new Map<number, number>();
    const strays: string[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const m = /^dev-(\d+)-c([0-9])$/.exec((JSON.parse(body) as { device: string }).device);
        if (m) counts.set(Number(m[1]), (counts.get(Number(m[1])) ?? 0) + 1);
        else strays.push(body);
        res.writeHead(200, { 'content-length': 0 });
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}/fix`;
      const values = Array.from({ length: 25 }, (_, i) => `dev-${i}-c[c]`);
      const run = await load({ url, method: 'POST', body: '{"device":"[seq]"}', sequencePlaceholder: '[seq]', sequenceValues: values, connectionPlaceholder: '[c]', seconds: 1 });
      assert.deepEqual(strays, []);
      assert.deepEqual([...counts.keys()].sort((a, b) => a - b), values.map((_, i) => i));
      // In turn, not at random: only the requests each run built last and never sent (one per connection and
      // run) leave a value short of a whole pass; random picks would spread hundreds of requests far wider.
      const n = [...counts.values()];
      assert.ok(run.completed > 25 * 20, `${run.completed} requests`);
      assert.ok(Math.max(...n) - Math.min(...n) <= 1 + 2 * 10, `counts ${n.join(' ')}`);
      await assert.rejects(load({ url, body: '{}', sequencePlaceholder: '[seq]', sequenceValues: values, seconds: 1 }), /neither the URL nor the body/);
      await assert.rejects(load({ url, body: '{"d":"[seq]"}', sequencePlaceholder: '[seq]', sequenceValues: [], seconds: 1 }), /come together/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
