// CPU time and SQL statements per request of the hot paths (issue #19), a measure that does not move
// with the machine's load as req/s does. The server runs alone on this process; autocannon runs in a
// child process (and the beacon path's 10 stream subscribers in another), so process.cpuUsage() of this
// process over N requests is the server's CPU only. Run:
//
//   npx tsx bench/cpu-per-request.ts [auth-me] [trackers] [events-api] [beacons] [bare] [fastify] [--requests 20000]
//
// `bare` measures a node:http server in this process answering auth-me's bytes and the trackers'
// empty 200 (the benchmarks' baselines): the ratio of CPU per request is what the req/s ratio tends
// to when the server's core is the limit. `fastify` measures Fastify itself (one route, no plugins) answering the same.
//   npx tsx bench/cpu-per-request.ts trackers --profile /tmp/prof   # and a .cpuprofile of the measured requests only
//
// Not part of `npm run bench`: it prints its figures and writes nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import os from 'node:os';
import SQLite from 'better-sqlite3';
import http from 'node:http';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { liveKey, startMuster } from './lib.js';

const args = process.argv.slice(2);
const N = Number(args[args.indexOf('--requests') + 1] ?? 0) || 20_000;
const profileDir = args.includes('--profile') ? args[args.indexOf('--profile') + 1] : undefined;
const only = args.filter((a, i) => !a.startsWith('--') && !/^\d+$/.test(a) && args[i - 1] !== '--profile');
const want = (name: string) => only.length === 0 || only.includes(name);

const require = createRequire(import.meta.url);
const AUTOCANNON = path.join(path.dirname(require.resolve('autocannon/package.json')), 'autocannon.js');

/** Counts every better-sqlite3 statement run in this process (prototype wrap, as beacons.bench.ts does). */
function countStatements(): { count: () => number } {
  type Fn = (...a: unknown[]) => unknown;
  const scratch = new SQLite(':memory:');
  const proto = Object.getPrototypeOf(scratch.prepare('select 1')) as Record<string, Fn>;
  scratch.close();
  let n = 0;
  for (const name of ['run', 'all', 'get', 'iterate']) {
    const original = proto[name]!;
    proto[name] = function (this: unknown, ...a: unknown[]) {
      n++;
      return original.apply(this, a);
    };
  }
  return { count: () => n };
}

/** autocannon in a child process: `amount` requests over 10 connections; resolves with its non-2xx count. */
function cannon(url: string, amount: number, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<number> {
  const argv = [AUTOCANNON, '-c', '10', '-a', String(amount), '-j', '-m', opts.method ?? 'GET'];
  for (const [k, v] of Object.entries(opts.headers ?? {})) argv.push('-H', `${k}=${v}`);
  if (opts.body) argv.push('-b', opts.body);
  argv.push(url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      try {
        const r = JSON.parse(out) as { non2xx: number; errors: number };
        resolve(r.non2xx + r.errors);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

/** Server CPU µs and SQL statements per request over N requests, after N/4 of warm-up. */
async function measure(name: string, url: string, opts: Parameters<typeof cannon>[2], sql: { count: () => number }): Promise<void> {
  const warmBad = await cannon(url, Math.ceil(N / 4), opts);
  if (warmBad > 0) throw new Error(`${name}: ${warmBad} warm-up answers not 2xx`);
  const session = profileDir ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    // 100 µs between samples (the default, 1 ms, gives too few samples to rank functions of a few µs).
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const s0 = sql.count();
  const c0 = process.cpuUsage();
  const bad = await cannon(url, N, opts);
  const c = process.cpuUsage(c0);
  if (session && profileDir) {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(profileDir, { recursive: true });
    fs.writeFileSync(path.join(profileDir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
  const s = sql.count() - s0;
  if (bad > 0) throw new Error(`${name}: ${bad} answers not 2xx`);
  const us = (c.user + c.system) / N;
  console.log(`${name.padEnd(10)} ${us.toFixed(1).padStart(7)} µs CPU/request (user ${(c.user / N).toFixed(1)}, system ${(c.system / N).toFixed(1)}), ${(s / N).toFixed(2)} SQL statements/request, N=${N}, load ${os.loadavg()[0]!.toFixed(2)}`);
}


// The benchmarks' own rate limits (1,000,000 per window: counted, never reached).
const muster = await startMuster();
const subscribers: ChildProcess[] = [];
try {
  const sql = countStatements();
  const key = await liveKey(muster.app);
  const headers = { 'x-api-key': key };
  if (want('auth-me')) await measure('auth-me', `${muster.url}/v1/auth/me`, { headers }, sql);
  if (want('trackers')) {
    const created = await muster.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { name: 'bench tracker' } });
    const { token } = created.json<{ token: string }>();
    const q = `id=${token}&lat=52.3702&lon=4.8952&speed=12.5&bearing=90&altitude=4&accuracy=8&batt=80`;
    await measure('trackers', `${muster.url}/v1/trackers/osmand?${q}`, {}, sql);
  }
  if (want('events-api')) {
    // A PagerDuty trigger whose dedup_key repeats (as bench/events-api.bench.ts): after the first, the dedup path.
    const created = await muster.app.inject({ method: 'POST', url: '/v1/integrations', headers, payload: { name: 'bench' } });
    const url = new URL(created.json<{ events_url: string }>().events_url).pathname;
    const event = { event_action: 'trigger', dedup_key: 'bench-disk-full', payload: { summary: 'Disk 95% full on db-1', source: 'db-1.example.com', severity: 'critical' } };
    await muster.app.inject({ method: 'POST', url, payload: event });
    await measure('events-api', `${muster.url}${url}`, { method: 'POST', body: JSON.stringify(event), headers: { 'content-type': 'application/json' } }, sql);
  }
  if (want('beacons')) {
    // 10 subscribers of the signal stream, in a child process, as in beacons.bench.ts.
    const script = `const http=require('node:http');for(let i=0;i<10;i++)http.get(${JSON.stringify(`${muster.url}/v1/signals/stream`)},{headers:${JSON.stringify(headers)}},(r)=>r.resume());`;
    subscribers.push(spawn(process.execPath, ['-e', script], { stdio: 'ignore' }));
    await new Promise((r) => setTimeout(r, 1000)); // the streams open (a tool, not a test)
    const body = JSON.stringify({ type: 'beacon', lat: 52.3702, lng: 4.8952, accuracy: 12, meta: { device_id: 'bench-device' } });
    await measure('beacons', `${muster.url}/v1/signals`, { method: 'POST', body, headers: { ...headers, 'content-type': 'application/json' } }, sql);
  }
  if (want('bare')) {
    const answer = await muster.app.inject({ method: 'GET', url: '/v1/auth/me', headers });
    const me = answer.body;
    const musterHeaders = Object.fromEntries(Object.entries(answer.headers).filter(([k]) => !['date', 'connection', 'keep-alive', 'content-length'].includes(k))) as Record<string, string>;
    const server = http.createServer((req, res) => {
      if (req.url === '/me-headers') {
        res.writeHead(200, { ...musterHeaders, 'content-length': Buffer.byteLength(me) });
        res.end(me);
      } else if (req.url === '/me') {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(me) });
        res.end(me);
      } else {
        res.writeHead(200, { 'content-length': 0 });
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await measure('bare-me', `${base}/me`, {}, sql);
    await measure('bare-empty', `${base}/empty`, {}, sql);
    // The same bytes with every header Muster's answer carries (security headers, rate limits, request id,
    // cache-control): what the header set alone costs node:http, beside the rest of the request path.
    await measure('bare-me+headers', `${base}/me-headers`, {}, sql);
    server.closeAllConnections();
    server.close();
  }
  if (want('fastify')) {
    // The framework's own floor: Fastify with one route answering auth-me's bytes, no plugins, no hooks.
    const me = (await muster.app.inject({ method: 'GET', url: '/v1/auth/me', headers })).body;
    const floor = Fastify({ logger: false });
    floor.get('/me', (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(me));
    floor.get('/empty', (_request, reply) => reply.send());
    await floor.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(floor.server.address() as AddressInfo).port}`;
    await measure('fastify-me', `${base}/me`, {}, sql);
    await measure('fastify-empty', `${base}/empty`, {}, sql);
    await floor.close();
  }
} finally {
  for (const s of subscribers) s.kill();
  await muster.close();
}
