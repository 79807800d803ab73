// Diagnostic (not part of `npm run bench`): CPU per beacon of POST /v1/signals with the device state in memory
// and in Redis (a redis-server of its own), in alternating rounds, with Redis's CPU, segments and commands per
// beacon, and optionally a .cpuprofile of the Redis side's loads. Writes nothing.
//   npx tsx bench/probe-beacons-redis.ts [--rounds 4] [--seconds 3] [--profile DIR]
import fs from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { Redis } from 'ioredis';
import { startRedisServer } from '../test/cluster/redis-server.js';
import { forkTs } from './ipc.js';
import { liveKey, load, median, numberOption, startMuster, type LoadRun } from './lib.js';
import { redisReady } from './pg-redis.js';
import { SUBSCRIBERS_SCRIPT } from './sse.js';

const ROUNDS = numberOption('rounds', 4);
const SECONDS = numberOption('seconds', 3);
const args = process.argv.slice(2);
const profileDir = args.includes('--profile') ? args[args.indexOf('--profile') + 1] : undefined;
const CONN = '[conn]';
const beacon = { type: 'beacon', lat: 52.3702, lng: 4.8952, accuracy: 12, meta: { device_id: `bench-device-${CONN}` } };

const redis = await startRedisServer();
const probe = new Redis(redis.url);
const receiver = await forkTs(SUBSCRIBERS_SCRIPT);
const mem = await startMuster();
const rd = await startMuster({ REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix });
await redisReady(rd);
const session = new Session();
session.connect();
try {
  const opts = [];
  for (const [group, m] of [['memory', mem], ['redis', rd]] as const) {
    const headers = { 'x-api-key': await liveKey(m.app) };
    await receiver.call('open', { group, url: `${m.url}/v1/signals/stream`, headers, count: 10, concurrency: 10, timeoutMs: 10_000 });
    opts.push({ method: 'POST' as const, body: beacon, connectionPlaceholder: CONN, seconds: SECONDS, url: `${m.url}/v1/signals`, headers });
  }
  const cpuMs = async () => {
    const info = await probe.info('cpu');
    const n = (k: string) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1]);
    return (n('used_cpu_user') + n('used_cpu_sys')) * 1000;
  };
  const runs: { memory: LoadRun[]; redis: LoadRun[] } = { memory: [], redis: [] };
  await load(opts[0]!);
  await load(opts[1]!);
  await probe.config('RESETSTAT');
  let redisBeacons = 0;
  if (profileDir) {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
  }
  for (let i = 0; i < ROUNDS; i++) {
    if (profileDir) await session.post('Profiler.start');
    runs.memory.push(await load(opts[0]!));
    if (profileDir) {
      const { profile } = await session.post('Profiler.stop');
      fs.mkdirSync(profileDir, { recursive: true });
      fs.writeFileSync(path.join(profileDir, `memory-${i}.cpuprofile`), JSON.stringify(profile));
      await session.post('Profiler.start');
    }
    const r = await load({ ...opts[1]!, otherCpuMs: cpuMs, wire: { redisPort: redis.port } });
    if (profileDir) {
      const { profile } = await session.post('Profiler.stop');
      fs.mkdirSync(profileDir, { recursive: true });
      fs.writeFileSync(path.join(profileDir, `redis-${i}.cpuprofile`), JSON.stringify(profile));
    }
    redisBeacons += r.completed;
    runs.redis.push(r);
    console.log(`round ${i}: memory ${Math.round(runs.memory[i]!.requestsPerSec)} req/s ${Math.round(runs.memory[i]!.cpuUs)} µs; redis ${Math.round(r.requestsPerSec)} req/s ${Math.round(r.cpuUs)} µs + redis-server ${Math.round(r.otherCpuUs ?? NaN)} µs, ${r.wire?.redisSegments.toFixed(2)} segs ${Math.round(r.wire?.redisBytes ?? NaN)} B`);
  }
  const stats = await probe.info('commandstats');
  const calls = [...stats.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map((m) => `${m[1]} ${(Number(m[2]) / redisBeacons).toFixed(2)}`);
  const m = (xs: LoadRun[], k: 'cpuUs' | 'requestsPerSec') => Math.round(median(xs.map((x) => x[k])));
  console.log(`median: memory ${m(runs.memory, 'requestsPerSec')} req/s ${m(runs.memory, 'cpuUs')} µs; redis ${m(runs.redis, 'requestsPerSec')} req/s ${m(runs.redis, 'cpuUs')} µs + redis-server ${Math.round(median(runs.redis.map((r) => r.otherCpuUs ?? NaN)))} µs; ratio ${(median(runs.redis.map((r, i) => r.requestsPerSec / runs.memory[i]!.requestsPerSec)) * 100).toFixed(1)} %`);
  console.log(`commands per beacon: ${calls.join(', ')}`);
} finally {
  session.disconnect();
  await mem.close();
  await rd.close();
  await receiver.stop();
  probe.disconnect();
  await redis.clean();
  await redis.stop();
  process.exit(0);
}
