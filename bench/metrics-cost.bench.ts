// What the request metrics cost (issue #22): CPU time per request of GET /v1/auth/me and of a beacon
// (POST /v1/signals) on a Muster with METRICS_TOKEN set (the request histogram's onResponse hook on
// every request) and on one without, in the same run, alternating; and the hook's own work alone.
//
// CPU time, not throughput: process.cpuUsage() over N sequential requests through app.inject (no
// socket, no load generator in the process), so the figure does not depend on how loaded the machine
// is. inject leaves out the HTTP parsing and the socket write, which are the same with and without
// metrics; the difference between the two servers is the metrics' cost.
import os from 'node:os';
import client from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { machine, QUICK, sized, startMuster, liveKey, type BenchResult, type MusterServer } from './lib.js';
import { metricsOf } from '../src/modules/metrics/metrics.js';

const NAME = 'metrics-cost';
const ROUNDS = sized(5, 2);
const REQUESTS = { me: sized(3000, 300), beacon: sized(500, 50) };
const HOOK_CALLS = sized(2_000_000, 200_000);
const TOKEN = 'bench-metrics-token-0123456789';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

interface Subject {
  label: string;
  muster: MusterServer;
  headers: Record<string, string>;
}

type Request = { method: 'GET' | 'POST'; url: string; payload?: object };

/** CPU µs per request over `n` sequential requests; throws on any answer but the expected one. */
async function cpuPerRequest(app: FastifyInstance, headers: Record<string, string>, req: (i: number) => Request, n: number, status: number): Promise<number> {
  const start = cpuMicros();
  for (let i = 0; i < n; i++) {
    const res = await app.inject({ ...req(i), headers });
    if (res.statusCode !== status) throw new Error(`${req(i).method} ${req(i).url}: ${res.statusCode} ${res.body}`);
  }
  return (cpuMicros() - start) / n;
}

const me = (): Request => ({ method: 'GET', url: '/v1/auth/me' });
const beacon = (i: number): Request => ({
  method: 'POST',
  url: '/v1/signals',
  payload: { type: 'beacon', lat: 52.37 + (i % 100) / 1e4, lng: 4.89, accuracy: 12, meta: { device_id: `bench-metrics-${i % 10}` } },
});

export async function run(): Promise<BenchResult> {
  const subjects: Subject[] = [];
  try {
    for (const [label, token] of [
      ['METRICS_TOKEN unset', ''],
      ['METRICS_TOKEN set', TOKEN],
    ] as const) {
      const muster = await startMuster({ METRICS_TOKEN: token });
      subjects.push({ label, muster, headers: { 'x-api-key': await liveKey(muster.app) } });
    }
    const [off, on] = subjects as [Subject, Subject];
    // The metrics are really on for one and off for the other.
    const scrape = (s: Subject) => s.muster.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    if ((await scrape(off)).statusCode !== 404) throw new Error('metrics answered without METRICS_TOKEN');
    // Warm-up: JIT, caches, the devices' first beacons (which turn them on).
    for (const s of subjects) {
      await cpuPerRequest(s.muster.app, s.headers, me, sized(500, 50), 200);
      await cpuPerRequest(s.muster.app, s.headers, beacon, sized(200, 20), 201);
    }

    const figures = { me: new Map<string, number[]>(), beacon: new Map<string, number[]>() };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so a drift of the machine spreads over both.
      for (const s of round % 2 ? [on, off] : [off, on]) {
        for (const [path, req, status] of [
          ['me', me, 200],
          ['beacon', beacon, 201],
        ] as const) {
          const list = figures[path].get(s.label) ?? [];
          list.push(await cpuPerRequest(s.muster.app, s.headers, req, REQUESTS[path], status));
          process.stderr.write(`  round ${round + 1}, ${s.label}, ${path}: ${list.at(-1)!.toFixed(1)} µs/request\n`);
          figures[path].set(s.label, list);
        }
      }
    }
    const text = (await scrape(on)).body;
    const counted = /http_request_duration_seconds_count\{method="GET",route="\/v1\/auth\/me",status_class="2xx"\} (\d+)/.exec(text)?.[1];
    const expected = sized(500, 50) + ROUNDS * REQUESTS.me; // the warm-up and the rounds
    if (Number(counted) !== expected) throw new Error(`the histogram counted ${counted} GET /v1/auth/me, expected ${expected}`);

    // The hook's work alone, in a tight loop: this observe, and the one it replaced (prom-client's
    // Histogram child found by a string key; its observe builds, checks and hashes a label object).
    const cpuNs = (f: (i: number) => void) => {
      for (let i = 0; i < HOOK_CALLS / 10; i++) f(i); // warm-up
      const start = cpuMicros();
      for (let i = 0; i < HOOK_CALLS; i++) f(i);
      return ((cpuMicros() - start) * 1000) / HOOK_CALLS;
    };
    const histogram = metricsOf(on.muster.ctx).httpDuration;
    const request = { method: 'GET', url: '/v1/auth/me', statusCode: 200 };
    const hookNs = cpuNs((i) => histogram.observe(request.method, request.url, request.statusCode, (i % 1000) / 1e5));
    const old = new client.Histogram({
      name: 'old_http_request_duration_seconds',
      help: 'the former way',
      labelNames: ['method', 'route', 'status_class'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [],
    });
    const children = new Map<string, client.Histogram.Internal<'method' | 'route' | 'status_class'>>();
    const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];
    const oldNs = cpuNs((i) => {
      const statusClass = CLASSES[Math.floor(request.statusCode / 100) - 1] ?? 'other';
      const key = `${request.method} ${request.url} ${statusClass}`;
      let child = children.get(key);
      if (!child) children.set(key, (child = old.labels(request.method, request.url, statusClass)));
      child.observe((i % 1000) / 1e5);
    });

    const us = (n: number) => n.toFixed(1);
    const row = (label: string, path: 'me' | 'beacon') => {
      const offUs = median(figures[path].get(off.label)!);
      const onUs = median(figures[path].get(on.label)!);
      return `| ${label} | ${us(offUs)} | ${us(onUs)} | ${us(onUs - offUs)} |`;
    };
    const perRound = (path: 'me' | 'beacon') =>
      figures[path]
        .get(on.label)!
        .map((v, i) => us(v - figures[path].get(off.label)![i]!))
        .join(', ');
    const markdown = [
      '## What the request metrics cost (METRICS_TOKEN set vs unset)',
      '',
      'Measured: CPU time per request (`process.cpuUsage()`, user + system, over N sequential requests through',
      '`app.inject`, so no socket and no load generator share the process) on two Musters in the same process, one',
      'with `METRICS_TOKEN` set (the `http_request_duration_seconds` observe on every request) and one without.',
      `${ROUNDS} rounds alternating which goes first, each ${REQUESTS.me} \`GET /v1/auth/me\` and ${REQUESTS.beacon} beacons`,
      '(`POST /v1/signals`, 10 devices) with a live API key; medians. CPU time per request depends far less on how busy',
      'the machine is than throughput, yet on a loaded machine it still moves by hundreds of µs between rounds (shared',
      'caches, GC); inject leaves out HTTP parsing and the socket, the same for both.',
      '',
      '| Request | CPU µs/request, unset | CPU µs/request, set | Difference |',
      '| --- | ---: | ---: | ---: |',
      row('`GET /v1/auth/me`', 'me'),
      row('beacon `POST /v1/signals`', 'beacon'),
      '',
      `Difference per round (µs): auth/me ${perRound('me')}; beacon ${perRound('beacon')}. A difference within`,
      "the rounds' spread is no measurable cost: the loop below is the hook's cost.",
      '',
      `The hook's work alone, ${HOOK_CALLS.toLocaleString('en-US')} calls in a loop (CPU ns per call): \`RequestHistogram.observe\` ${hookNs.toFixed(0)} ns;`,
      `the prom-client \`Histogram\` child found by a string key, which it replaced, ${oldNs.toFixed(0)} ns. Both leave out`,
      "Fastify's `request.routeOptions` getter that the hook reads the route pattern from.",
      '',
      `Machine: ${machine()} (${os.platform()} ${os.arch()}). Date: ${new Date().toISOString().slice(0, 10)}. Command: \`npm run bench${QUICK ? ' -- --quick' : ''} -- metrics-cost\`.`,
    ].join('\n');
    return { name: NAME, markdown };
  } finally {
    for (const s of subjects) await s.muster.close();
  }
}
