import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { startRedisServer, type RedisServer } from '../../test/cluster/redis-server.js';
import { connectRedis } from '../lib/redis.js';
import type { EventBus, LiveEvent, NewEvent } from './bus.js';
import { Hub, type Audience, type Sink } from './hub.js';
import { createRedisBus } from './redis-bus.js';

// Two "instances" in one process: each with its own Redis connections, bus and hub, as two servers
// would have. A redis-server of the test's own, so it can be stopped and started again.

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

class Collect implements Sink {
  readonly chunks: string[] = [];
  writableLength = 0;
  destroyed = false;
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  destroy(): void {
    this.destroyed = true;
  }
  get ids(): number[] {
    return this.chunks.filter((c) => c.startsWith('id: ')).map((c) => Number(/^id: (\d+)/.exec(c)![1]));
  }
  get datas(): unknown[] {
    return this.chunks.filter((c) => c.startsWith('id: ')).map((c) => JSON.parse(/\ndata: (.*)\n\n$/.exec(c)![1]!) as unknown);
  }
}

const audience = (orgIds: number[], mode: 'live' | 'test' = 'live', channel = 'incidents'): Audience => ({ channel, orgIds: new Set(orgIds), mode });
const OPTIONS = { heartbeatMs: 60_000, replayMs: 60_000, replayMax: 1_000, maxBufferedBytes: 1_000_000 };

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Redis event bus (two instances on one Redis)', () => {
  let server: RedisServer;
  const opened: { redis: Redis; bus: EventBus; hub: Hub }[] = [];

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    for (const o of opened) {
      o.hub.close();
      await o.bus.close();
      o.redis.disconnect();
    }
    await server.clean();
    await server.stop();
  });

  /** An instance: a command connection, a Redis bus (with its subscriber connection) and a hub. */
  async function instance(replayMax = 1_000, replayMs = 60_000) {
    const redis = connectRedis(server.url, log);
    const bus = createRedisBus(redis, log, { prefix: server.prefix, replayMs, replayMax });
    const hub = new Hub(bus, { ...OPTIONS, replayMs, replayMax });
    opened.push({ redis, bus, hub });
    await until(() => redis.status === 'ready', 'the connection is ready');
    // Subscribed once a probe published by this instance comes back to it.
    const seen: LiveEvent[] = [];
    const off = bus.subscribe((e) => seen.push(e));
    await until(() => {
      if (seen.length === 0) bus.publish(event({ channel: 'probe', type: 'probe' }));
      return seen.length > 0;
    }, 'the subscriber hears its own probe');
    off();
    return { redis, bus, hub };
  }

  let n = 0;
  const event = (fields: Partial<NewEvent> = {}): NewEvent => ({ channel: 'incidents', orgId: 1, mode: 'live', type: 'incident.created', payload: { n: ++n }, ...fields });

  test('an event published on one instance reaches the streams of both, with one id, in one order everywhere', async () => {
    const a = await instance();
    const b = await instance();
    const onA = new Collect();
    const onB = new Collect();
    const otherOrg = new Collect();
    const otherMode = new Collect();
    a.hub.subscribe(audience([1]), onA);
    b.hub.subscribe(audience([1]), onB);
    b.hub.subscribe(audience([2]), otherOrg);
    b.hub.subscribe(audience([1], 'test'), otherMode);

    // Alternating publishers: ids come from one sequence in Redis.
    a.bus.publish(event({ payload: { from: 'a', title: 'Boiler "room"\nflooded' } }));
    b.bus.publish(event({ payload: { from: 'b' } }));
    a.bus.publish(event({ payload: { from: 'a2' } }));
    b.bus.publish(event({ orgId: 2, payload: { from: 'b-org2' } }));
    b.bus.publish(event({ mode: 'test', payload: { from: 'b-test' } }));
    await until(() => onA.ids.length === 3 && onB.ids.length === 3 && otherOrg.ids.length === 1 && otherMode.ids.length === 1, 'every stream got its events');

    assert.deepEqual(onA.chunks, onB.chunks, 'the same frames, ids included, on both instances');
    // Two connections: B's event may land before or after A's second; A's own two keep their order.
    const order = onA.datas.map((d) => (d as { payload: { from: string } }).payload.from);
    assert.deepEqual([...order].sort(), ['a', 'a2', 'b']);
    assert.ok(order.indexOf('a') < order.indexOf('a2'), `one connection keeps its order: ${order.join(', ')}`);
    // The first of A's events, wherever B's landed (B's may come first: the test's own comment above).
    assert.deepEqual(onA.datas[order.indexOf('a')], { type: 'incident.created', payload: { from: 'a', title: 'Boiler "room"\nflooded' } });
    const ids = onA.ids;
    assert.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, `ids grow in the order every instance receives them: ${ids.join(', ')}`);
    assert.ok(Math.abs(ids[0]! / 1000 - Date.now()) < 60_000, 'ids are microseconds since the epoch, like local ids');
    assert.deepEqual((otherOrg.datas[0] as { payload: unknown }).payload, { from: 'b-org2' });
    assert.deepEqual((otherMode.datas[0] as { payload: unknown }).payload, { from: 'b-test' });
  });

  test('an event is serialised once across the cluster: receivers write the data they were sent', async (t) => {
    const a = await instance();
    const b = await instance();
    const onA = new Collect();
    const onB = new Collect();
    a.hub.subscribe(audience([7]), onA);
    b.hub.subscribe(audience([7]), onB);
    const stringify = t.mock.method(JSON, 'stringify');
    a.bus.publish(event({ orgId: 7, payload: { big: 'x'.repeat(100) } }));
    await until(() => onA.ids.length === 1 && onB.ids.length === 1, 'both streams got it');
    assert.equal(stringify.mock.callCount(), 1, 'one JSON.stringify for the publisher and both hubs');
  });

  test('a stream that resumes on an instance that never saw the events gets them from Redis, then live ones, nothing twice', async () => {
    const a = await instance();
    const seenOnA = new Collect();
    a.hub.subscribe(audience([3]), seenOnA);
    for (const fields of [{}, { orgId: 4 }, {}, { mode: 'test' as const }, { channel: 'signals' }, {}]) a.bus.publish(event({ orgId: 3, ...fields }));
    await until(() => seenOnA.ids.length === 3, 'A streamed them');
    const [first, second, third] = seenOnA.ids as [number, number, number];

    // B starts after the events: its own buffer is empty, so only the shared stream can replay.
    const b = await instance();
    const resumed = new Collect();
    b.hub.subscribe(audience([3]), resumed, first);
    a.bus.publish(event({ orgId: 3, payload: { live: true } }));
    await until(() => resumed.ids.length === 3, 'replay and the live event arrived');
    assert.deepEqual(resumed.ids.slice(0, 2), [second, third], 'the missed events of its audience, in order');
    assert.deepEqual((resumed.datas[2] as { payload: unknown }).payload, { live: true });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(resumed.ids.length, 3, 'nothing twice');

    const fromFirst = new Collect();
    b.hub.subscribe(audience([3, 4]), fromFirst, first - 1);
    await until(() => fromFirst.ids.length === 5, 'everything of orgs 3 and 4 in the window');
    assert.deepEqual([...fromFirst.ids].sort((x, y) => x - y), fromFirst.ids, 'in id order');

    const fromZero = new Collect();
    b.hub.subscribe(audience([3, 4]), fromZero, 0);
    await until(() => fromZero.chunks.length > 0, 'an answer to a resume from before the window');
    assert.deepEqual(fromZero.datas, [{ type: 'resync' }], 'resync instead of a partial window');
  });

  test('the shared replay stream is capped by count; a resume from before what it keeps gets resync', async () => {
    const a = await instance(10);
    const seen = new Collect();
    a.hub.subscribe(audience([5], 'live', 'capped'), seen);
    for (let i = 0; i < 200; i++) a.bus.publish(event({ orgId: 5, channel: 'capped' }));
    await until(() => seen.ids.length === 200, 'A streamed them');
    const key = `${server.prefix}events:capped:live:5`;
    const len = await a.redis.xlen(key);
    assert.ok(len >= 10 && len < 200, `the stream was trimmed (${len} entries)`);

    const b = await instance(10);
    const late = new Collect();
    b.hub.subscribe(audience([5], 'live', 'capped'), late, seen.ids[0]);
    await until(() => late.chunks.length > 0, 'an answer');
    assert.deepEqual(late.datas, [{ type: 'resync' }], 'the events after the id were partly trimmed');
    const kept = new Collect();
    b.hub.subscribe(audience([5], 'live', 'capped'), kept, seen.ids.at(-6));
    await until(() => kept.ids.length === 5, 'the kept events after a kept one');
    assert.deepEqual(kept.ids, seen.ids.slice(-5));
  });

  test('the shared replay forgets events older than the replay window', async () => {
    // Published every 600 ms, so the stream itself never goes idle long enough to expire.
    const a = await instance(1_000, 2_000);
    const seen = new Collect();
    a.hub.subscribe(audience([6], 'live', 'aged'), seen);
    a.bus.publish(event({ orgId: 6, channel: 'aged', payload: { at: 0 } }));
    for (const at of [600, 1200, 1800, 2400]) {
      await new Promise((r) => setTimeout(r, 600));
      a.bus.publish(event({ orgId: 6, channel: 'aged', payload: { at } }));
    }
    await until(() => seen.ids.length === 5, 'A streamed them');
    const b = await instance(1_000, 2_000);
    const late = new Collect();
    b.hub.subscribe(audience([6], 'live', 'aged'), late, seen.ids[2]);
    await until(() => late.datas.some((d) => (d as { payload: { at: number } }).payload.at === 2400), 'the newest event is replayed');
    const replayed = late.datas.map((d) => (d as { payload: { at: number } }).payload.at);
    assert.deepEqual(replayed, [1800, 2400], 'the events after the id, all still in the window');
    const tooOld = new Collect();
    b.hub.subscribe(audience([6], 'live', 'aged'), tooOld, seen.ids[0]);
    await until(() => tooOld.chunks.length > 0, 'an answer');
    assert.deepEqual(tooOld.datas, [{ type: 'resync' }], 'the id is older than the window: resync, not the part that is left');
  });

  test('without Redis an instance still streams its own events, and delivery across instances returns with Redis', async () => {
    const a = await instance();
    const b = await instance();
    const onA = new Collect();
    const onB = new Collect();
    a.hub.subscribe(audience([8]), onA);
    b.hub.subscribe(audience([8]), onB);

    await server.stop();
    await until(() => a.redis.status !== 'ready', 'A noticed');
    a.bus.publish(event({ orgId: 8, payload: { during: 'outage' } }));
    await until(() => onA.ids.length === 1, 'A delivered it locally');
    assert.deepEqual((onA.datas[0] as { payload: unknown }).payload, { during: 'outage' });
    assert.equal(onB.ids.length, 0, 'B could not hear it');

    await server.start();
    await until(() => a.redis.status === 'ready' && b.redis.status === 'ready', 'both reconnected', 10_000);
    await until(
      () => {
        if (onB.ids.length === 0) a.bus.publish(event({ orgId: 8, payload: { after: 'outage' } }));
        return onB.ids.length > 0;
      },
      'an event from A reaches B again',
      10_000,
    );
    assert.deepEqual((onB.datas[0] as { payload: unknown }).payload, { after: 'outage' });
    assert.ok(onA.ids.length >= 2, 'A streamed both');
    assert.ok(onA.ids[1]! > onA.ids[0]!, 'ids keep growing across the outage');
  });
});
