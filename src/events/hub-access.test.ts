import assert from 'node:assert/strict';
import { afterEach, describe, mock, test } from 'node:test';
import type { AccessNotice } from './access.js';
import { noticeCovers, parseNotice } from './access.js';
import { createLocalBus, type EventBus } from './bus.js';
import { slotFor, type AccessCheck, type CheckedStream } from './access-recheck.js';
import { Hub, RESYNC, frame, type Audience, type HubOptions, type Sink, type StreamAccess } from './hub.js';

// Streams end with the access that opened them: notices on the bus close the streams they cover.

class FakeSink implements Sink {
  readonly chunks: string[] = [];
  writableLength = 0;
  destroyed = false;
  write(chunk: string): boolean {
    assert.equal(this.destroyed, false, 'nothing is written to a destroyed sink');
    this.chunks.push(chunk);
    return true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

const A = 1;
const B = 2;
const audience = (orgIds: number[]): Audience => ({ channel: 'incidents', orgIds: new Set(orgIds), mode: 'live' });
const OPTIONS: HubOptions = { heartbeatMs: 60_000, replayMs: 60_000, replayMax: 1_000, maxBufferedBytes: 1_000_000 };

describe('Hub and access notices', () => {
  let bus: EventBus;
  let hub: Hub;

  function makeHub(options: Partial<HubOptions> = {}): Hub {
    bus = createLocalBus();
    hub = new Hub(bus, { ...OPTIONS, ...options });
    return hub;
  }
  afterEach(async () => {
    hub.close();
    await bus.close();
  });

  /** Five streams: two keys and a session of user 1, a key of user 2, and one opened without access. */
  function streams() {
    const opened = {
      key1: { sink: new FakeSink(), access: { userId: 1, keyId: 1 }, orgs: [A] },
      key2: { sink: new FakeSink(), access: { userId: 1, keyId: 2 }, orgs: [A, B] },
      session: { sink: new FakeSink(), access: { userId: 1, sessionId: 'hash-1' }, orgs: [A] },
      other: { sink: new FakeSink(), access: { userId: 2, keyId: 3 }, orgs: [A] },
      anonymous: { sink: new FakeSink(), access: undefined as StreamAccess | undefined, orgs: [A, B] },
    };
    for (const s of Object.values(opened)) hub.subscribe(audience(s.orgs), s.sink, undefined, s.access);
    return opened;
  }
  const closed = (s: ReturnType<typeof streams>) =>
    Object.entries(s)
      .filter(([, v]) => v.sink.destroyed)
      .map(([k]) => k)
      .sort();

  const cases: [string, AccessNotice, string[]][] = [
    ['a revoked key closes its streams only', { keyId: 1 }, ['key1']],
    ['an ended session closes its streams only', { sessionId: 'hash-1' }, ['session']],
    ['a membership that ends closes the user’s streams that include the org', { userId: 1, orgId: B }, ['key2']],
    ['a deleted org closes every stream that includes it', { orgId: B }, ['key2']],
    ['a deleted user closes all of the user’s streams', { userId: 1 }, ['key1', 'key2', 'session']],
    ['a notice for nobody here closes nothing', { keyId: 99 }, []],
  ];
  for (const [name, notice, expected] of cases) {
    test(name, () => {
      makeHub();
      const s = streams();
      bus.publishAccess(notice);
      assert.deepEqual(closed(s), expected);
      assert.equal(hub.stats().revoked, expected.length);
      assert.equal(hub.stats().subscribers, 5 - expected.length);
      bus.publish({ channel: 'incidents', orgId: A, mode: 'live', type: 'incident.created', payload: {} });
      for (const [k, v] of Object.entries(s)) assert.equal(v.sink.chunks.length, expected.includes(k) ? 0 : 1, `${k} gets events only while open`);
    });
  }

  test('a notice that lands while a stream is being opened is seen by its watch, and only until stopped', () => {
    makeHub();
    const watch = hub.watchAccess();
    assert.equal(watch.covers({ userId: 1, keyId: 1 }, new Set([A])), false);
    bus.publishAccess({ userId: 1, orgId: A });
    assert.equal(watch.covers({ userId: 1, keyId: 1 }, new Set([A])), true);
    assert.equal(watch.covers({ userId: 1, keyId: 1 }, new Set([B])), false, 'another org');
    assert.equal(watch.covers({ userId: 2, keyId: 1 }, new Set([A])), false, 'another user');
    watch.stop();
    const later = hub.watchAccess();
    later.stop();
    bus.publishAccess({ keyId: 1 });
    assert.equal(later.covers({ userId: 1, keyId: 1 }, new Set([A])), false, 'a stopped watch collects nothing');
  });

  test('a stream whose session expires is closed at the next heartbeat, by the app clock', async () => {
    let now = 1_000;
    makeHub({ heartbeatMs: 10, credentialClock: () => now });
    const expiring = new FakeSink();
    const keyed = new FakeSink();
    hub.subscribe(audience([A]), expiring, undefined, { userId: 1, sessionId: 's', expiresAt: 5_000 });
    hub.subscribe(audience([A]), keyed, undefined, { userId: 1, keyId: 1 });
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (expiring.chunks.length === 0) return;
        clearInterval(check);
        resolve();
      }, 5);
    });
    assert.equal(expiring.destroyed, false, 'alive before its expiry: heartbeats only');
    now = 5_000;
    const deadline = Date.now() + 2_000;
    while (!expiring.destroyed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(expiring.destroyed, true, 'closed once the clock reaches its expiry');
    assert.equal(keyed.destroyed, false, 'a key does not expire');
  });

  test('a Last-Event-ID from before this hub existed (resumeFloor) answers resync, not a partial replay', () => {
    makeHub({ resumeFloor: 1_000 });
    const before = new FakeSink();
    hub.subscribe(audience([A]), before, 999);
    assert.deepEqual(before.chunks, [frame(undefined, RESYNC)], 'no event seen yet: a resync without an id');
    bus.publish({ id: 1_500, channel: 'incidents', orgId: A, mode: 'live', type: 'x', payload: {} });
    const after = new FakeSink();
    hub.subscribe(audience([A]), after, 1_000);
    assert.equal(after.chunks.length, 1);
    assert.match(after.chunks[0]!, /^id: 1500\n/);
    const stale = new FakeSink();
    hub.subscribe(audience([A]), stale, 5);
    assert.deepEqual(stale.chunks, [frame(1_500, RESYNC)], 'the resync carries the newest id, so the next resume starts there');
  });
});

// Issue #31 F4: a notice can be lost (Redis away between instances). Streams are checked again on a
// period, a slice at a time, and all of them, held, when the bus hears notices again after a gap.
describe('Hub: checking open streams’ access again', () => {
  let bus: EventBus;
  let hub: Hub;
  let resume: (() => void) | undefined;
  afterEach(async () => {
    mock.timers.reset();
    hub.close();
    await bus.close();
  });

  /** A local bus that can say "hearing resumed", as the Redis bus does when its subscriber resubscribes. */
  function makeHub(options: Partial<HubOptions> = {}): Hub {
    const local = createLocalBus();
    bus = Object.assign(local, {
      onHearingResumed: (listener: () => void) => {
        resume = listener;
        return () => (resume = undefined);
      },
    });
    hub = new Hub(bus, { ...OPTIONS, ...options });
    return hub;
  }
  /** An AccessCheck that refuses the listed keys and records each batch it was asked about. */
  function refusing(keyIds: number[], calls: CheckedStream[][] = []): AccessCheck {
    return (streams) => {
      calls.push([...streams]);
      return Promise.resolve(streams.map((s) => !keyIds.includes(s.access.keyId ?? -1)));
    };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const publish = (id: number) => bus.publish({ id, channel: 'incidents', orgId: A, mode: 'live', type: 'incident.created', payload: { id } });

  test('each period checks every stream once, a slice per second, none in its first half period, and closes those whose access ended', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    makeHub({ recheckMs: 6_000 });
    const calls: CheckedStream[][] = [];
    hub.checkAccessWith(refusing([4], calls));
    const sinks = Array.from({ length: 9 }, (_, i) => {
      const sink = new FakeSink();
      hub.subscribe(audience([A]), sink, undefined, { userId: 1, keyId: i + 1 });
      return sink;
    });
    hub.subscribe(audience([A]), new FakeSink()); // opened without access: nothing to check
    const seconds = async (n: number) => {
      for (let second = 0; second < n; second++) {
        mock.timers.tick(1_000);
        await settle();
      }
    };
    await seconds(3);
    assert.equal(calls.length, 0, 'just opened (and checked as they opened): not in the first half of the period');
    await seconds(3);
    assert.deepEqual(calls.map((c) => c.length), [3, 3, 3], 'spread: a third of the streams each second of the second half');
    assert.deepEqual(calls.flat().map((c) => c.access.keyId).sort((a, b) => a! - b!), [1, 2, 3, 4, 5, 6, 7, 8, 9], 'each once per period');
    assert.deepEqual(sinks.map((s) => s.destroyed), sinks.map((_, i) => i === 3), 'only the revoked key’s stream closed');
    assert.equal(hub.stats().revoked, 1);
    await seconds(4);
    assert.equal(calls.length, 4, 'and round again, a period after the first check');
  });

  test('a stream opened at any second is first checked between half a period and a period later', () => {
    for (const slices of [1, 2, 3, 30, 3600]) {
      for (let tick = 0; tick < 2 * slices + 3; tick++) {
        for (let seq = 0; seq < 2 * slices + 3; seq++) {
          const slot = slotFor(tick, slices, seq);
          assert.ok(slot >= 0 && slot < slices);
          const wait = ((slot - (tick % slices) + slices) % slices) + 1; // the slice at `tick` is checked at the next second
          assert.ok(wait >= slices / 2 && wait <= slices, `slices ${slices}, tick ${tick}, seq ${seq}: checked after ${wait} s`);
        }
      }
    }
  });

  test('after a gap in the notices every stream is held until its check: a revoked one gets nothing, the others get what they missed', async () => {
    makeHub();
    let answer!: (verdicts: boolean[]) => void;
    hub.checkAccessWith((streams) => new Promise((resolve) => (answer = (v) => resolve(v.slice(0, streams.length)))));
    const revoked = new FakeSink();
    const kept = new FakeSink();
    hub.subscribe(audience([A]), revoked, undefined, { userId: 1, keyId: 1 });
    hub.subscribe(audience([A]), kept, undefined, { userId: 2, sessionId: 's' });
    publish(100);
    assert.equal(kept.chunks.length, 1);
    resume!();
    publish(101);
    publish(102);
    assert.equal(revoked.chunks.length, 1, 'held: nothing after the gap until checked');
    assert.equal(kept.chunks.length, 1);
    answer([false, true]);
    await settle();
    assert.equal(revoked.destroyed, true);
    assert.equal(revoked.chunks.length, 1, 'the revoked stream never saw 101 or 102');
    assert.deepEqual(kept.chunks.map((c) => /^id: (\d+)/.exec(c)?.[1]), ['100', '101', '102'], 'the kept one gets them, in order, once');
    publish(103);
    assert.equal(kept.chunks.length, 4, 'then live again');
  });

  test('a check that fails releases the held streams (the next one tries again) and is reported', async () => {
    const errors: unknown[] = [];
    makeHub({ onCheckError: (err) => errors.push(err) });
    hub.checkAccessWith(() => Promise.reject(new Error('database away')));
    const sink = new FakeSink();
    hub.subscribe(audience([A]), sink, undefined, { userId: 1, keyId: 1 });
    await hub.recheckAll(true);
    publish(200);
    assert.equal(sink.destroyed, false);
    assert.equal(sink.chunks.length, 1);
    assert.match(String(errors[0]), /database away/);
  });
});

/** The notices that only tell caches to read again, each naming org 5 (or a row of it). */
const CACHE_NOTICES: AccessNotice[] = [{ deviceId: 6, orgId: 5 }, { userRow: 1 }, { subscriptionsOf: 5 }, { sitesOf: 5 }, { integrationsOf: 5 }, { dispatchOf: 5 }, { maintenanceOf: 5 }];

describe('access notices', () => {
  test('survive the wire and refuse what is not one', () => {
    for (const n of [{ keyId: 3 }, { sessionId: 'abc' }, { userId: 4 }, { userId: 4, orgId: 5 }, { orgId: 5 }, ...CACHE_NOTICES]) assert.deepEqual(parseNotice(JSON.stringify(n)), n);
    for (const bad of ['', 'null', '[]', '{}', '{"keyId":"1"}', '{"userId":1.5}', 'not json']) assert.equal(parseNotice(bad), undefined, bad);
  });

  test('a notice that only drops cached rows (a device, a user row, an org’s settings) closes no stream', () => {
    for (const n of CACHE_NOTICES) assert.equal(noticeCovers(n, { userId: 1, keyId: 1 }, new Set([5])), false, JSON.stringify(n));
  });

  test('a key or session notice never matches by user alone', () => {
    assert.equal(noticeCovers({ keyId: 1 }, { userId: 1 }, new Set([A])), false);
    assert.equal(noticeCovers({ sessionId: 's' }, { userId: 1, keyId: 1 }, new Set([A])), false);
  });
});
