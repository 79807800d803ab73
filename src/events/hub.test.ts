import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { Mode } from '../db/schema.js';
import { createIdSource, createLocalBus, type EventBus, type LiveEvent } from './bus.js';
import { Hub, RESYNC, frame, type Audience, type HubOptions, type Sink } from './hub.js';

/** A sink that keeps what it is given; `writableLength` is set by the test to play a slow client. */
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

  /** The event frames (heartbeats left out). */
  get frames(): string[] {
    return this.chunks.filter((c) => !c.startsWith(':'));
  }

  /** The ids of the event frames, in the order written. */
  get ids(): number[] {
    return this.frames.map((f) => Number(/^id: (\d+)\n/.exec(f)?.[1]));
  }
}

const A = 1;
const B = 2;

const audience = (orgIds: number[], mode: Mode = 'live', channel = 'incidents'): Audience => ({ channel, orgIds: new Set(orgIds), mode });

const OPTIONS: HubOptions = { heartbeatMs: 60_000, replayMs: 60_000, replayMax: 1_000, maxBufferedBytes: 1_000 };

describe('Hub', () => {
  let bus: EventBus = createLocalBus();
  let hubs: Hub[] = [];
  let nextId = 0;

  function makeHub(options: Partial<HubOptions> = {}, now?: () => number): Hub {
    bus = createLocalBus();
    const hub = new Hub(bus, { ...OPTIONS, ...options }, now);
    hubs.push(hub);
    return hub;
  }

  function publish(fields: Partial<LiveEvent> = {}): LiveEvent {
    nextId += 1;
    const event: LiveEvent = { id: nextId, channel: 'incidents', orgId: A, mode: 'live', type: 'incident.created', payload: { n: nextId }, ...fields };
    bus.publish(event);
    return event;
  }

  afterEach(async () => {
    for (const hub of hubs) hub.close();
    hubs = [];
    await bus.close();
  });

  test('an event reaches only the subscribers of its channel, org and mode', () => {
    const hub = makeHub();
    const sinks = {
      aLive: new FakeSink(),
      aTest: new FakeSink(),
      bLive: new FakeSink(),
      bTest: new FakeSink(),
      aLiveSignals: new FakeSink(),
      abLive: new FakeSink(),
    };
    hub.subscribe(audience([A], 'live'), sinks.aLive);
    hub.subscribe(audience([A], 'test'), sinks.aTest);
    hub.subscribe(audience([B], 'live'), sinks.bLive);
    hub.subscribe(audience([B], 'test'), sinks.bTest);
    hub.subscribe(audience([A], 'live', 'signals'), sinks.aLiveSignals);
    hub.subscribe(audience([A, B], 'live'), sinks.abLive);
    assert.equal(hub.stats().subscribers, 6);

    const e1 = publish({ orgId: A, mode: 'live' });
    const e2 = publish({ orgId: A, mode: 'test' });
    const e3 = publish({ orgId: B, mode: 'live' });
    const e4 = publish({ orgId: A, mode: 'live', channel: 'signals' });
    const e5 = publish({ orgId: 3, mode: 'live' });

    assert.deepEqual(sinks.aLive.ids, [e1.id]);
    assert.deepEqual(sinks.aTest.ids, [e2.id]);
    assert.deepEqual(sinks.bLive.ids, [e3.id]);
    assert.deepEqual(sinks.bTest.ids, []);
    assert.deepEqual(sinks.aLiveSignals.ids, [e4.id]);
    assert.deepEqual(sinks.abLive.ids, [e1.id, e3.id]);
    for (const sink of Object.values(sinks)) {
      assert.equal(sink.ids.includes(e5.id), false, 'an org nobody listens to reaches nobody');
      assert.equal(sink.destroyed, false);
    }
  });

  test('each event is serialised once and the same frame goes to every subscriber', (t) => {
    const hub = makeHub();
    const one = new FakeSink();
    const two = new FakeSink();
    const three = new FakeSink();
    hub.subscribe(audience([A]), one);
    hub.subscribe(audience([A]), two);
    hub.subscribe(audience([A, B]), three);

    const stringify = t.mock.method(JSON, 'stringify');
    const event = publish({ type: 'incident.updated', payload: { Id: 7, title: 'Boiler "room"\nflooded', status: 'open' } });
    assert.equal(stringify.mock.callCount(), 1, 'one JSON.stringify for three subscribers');
    stringify.mock.restore();

    assert.equal(one.chunks.length, 1);
    const [text] = one.chunks;
    assert.equal(two.chunks[0], text);
    assert.equal(three.chunks[0], text);
    assert.equal(text, `id: ${event.id}\ndata: {"type":"incident.updated","payload":{"Id":7,"title":"Boiler \\"room\\"\\nflooded","status":"open"}}\n\n`);
    assert.equal(text, frame(event.id, { type: event.type, payload: event.payload }));
    assert.match(text, new RegExp(`^id: ${event.id}\\n`));
    assert.match(text, /\ndata: \{"type":"incident\.updated","payload":\{.*\}\}\n\n$/);
    assert.equal(text.split('\n').filter((l) => l.startsWith('data:')).length, 1, 'the JSON sits on one data: line');
  });

  test('frame() leaves the id line out when there is no id', () => {
    assert.equal(frame(undefined, { type: 'connected', org_ids: [1, 2] }), 'data: {"type":"connected","org_ids":[1,2]}\n\n');
    assert.equal(frame(12, { a: 1 }), 'id: 12\ndata: {"a":1}\n\n');
  });

  test('replay after a Last-Event-ID sends only later events of the audience, in order', () => {
    const hub = makeHub();
    const events = [
      publish({ orgId: A }),
      publish({ orgId: B }),
      publish({ orgId: A, mode: 'test' }),
      publish({ orgId: A }),
      publish({ orgId: A, channel: 'signals' }),
      publish({ orgId: A }),
      publish({ orgId: B }),
      publish({ orgId: A }),
    ];
    const aLive = events.filter((e) => e.orgId === A && e.mode === 'live' && e.channel === 'incidents').map((e) => e.id);
    assert.equal(aLive.length, 4);

    const fromSecond = new FakeSink();
    hub.subscribe(audience([A]), fromSecond, aLive[1]);
    assert.deepEqual(fromSecond.ids, aLive.slice(2));

    const fromStart = new FakeSink();
    hub.subscribe(audience([A]), fromStart, 0);
    assert.deepEqual(fromStart.ids, aLive);

    const between = new FakeSink();
    hub.subscribe(audience([A]), between, events[2]!.id); // an id of another audience
    assert.deepEqual(between.ids, aLive.slice(1));

    const both = new FakeSink();
    hub.subscribe(audience([A, B]), both, events[0]!.id);
    assert.deepEqual(both.ids, [events[1]!.id, events[3]!.id, events[5]!.id, events[6]!.id, events[7]!.id]);

    const testMode = new FakeSink();
    hub.subscribe(audience([A], 'test'), testMode, 0);
    assert.deepEqual(testMode.ids, [events[2]!.id]);

    const signals = new FakeSink();
    hub.subscribe(audience([A], 'live', 'signals'), signals, 0);
    assert.deepEqual(signals.ids, [events[4]!.id]);

    const upToDate = new FakeSink();
    hub.subscribe(audience([A]), upToDate, events[7]!.id);
    assert.deepEqual(upToDate.chunks, []);

    const fresh = new FakeSink();
    hub.subscribe(audience([A]), fresh);
    assert.deepEqual(fresh.chunks, [], 'no Last-Event-ID, no replay');

    const unknownChannel = new FakeSink();
    hub.subscribe(audience([A], 'live', 'nothing-here'), unknownChannel, 0);
    assert.deepEqual(unknownChannel.chunks, []);

    // Replay comes first, then live events follow without a gap or a repeat.
    const next = publish({ orgId: A });
    assert.deepEqual(fromSecond.ids, [...aLive.slice(2), next.id]);
    assert.deepEqual(fresh.ids, [next.id]);
  });

  test('replay forgets events older than replayMs', () => {
    let now = 1_000_000;
    const hub = makeHub({ replayMs: 5_000 }, () => now);
    const e1 = publish();
    now += 2_000;
    const e2 = publish();
    now += 2_000;
    const e3 = publish();
    assert.equal(hub.stats().replayEntries, 3);

    now += 2_000; // e1 is 6 s old, e2 4 s, e3 2 s
    const sink = new FakeSink();
    hub.subscribe(audience([A]), sink, e1.id);
    assert.deepEqual(sink.ids, [e2.id, e3.id], 'everything after e1 is still in the window');
    const tooOld = new FakeSink();
    hub.subscribe(audience([A]), tooOld, 0);
    assert.deepEqual(tooOld.chunks, [frame(e3.id, RESYNC)], 'an expired event after the id means resync, even before anything trims it, instead of a partial window');

    const e4 = publish(); // trims what is out of the window
    assert.equal(hub.stats().replayEntries, 3);

    now += 3_500; // e2 7.5 s, e3 5.5 s, e4 3.5 s
    const later = new FakeSink();
    hub.subscribe(audience([A]), later, e3.id);
    assert.deepEqual(later.ids, [e4.id]);
    const trimmed = new FakeSink();
    hub.subscribe(audience([A]), trimmed, 0);
    assert.deepEqual(trimmed.chunks, [frame(e4.id, RESYNC)], 'e1 was trimmed after 0');

    now += 10_000;
    const e5 = publish();
    assert.equal(hub.stats().replayEntries, 1);
    const last = new FakeSink();
    hub.subscribe(audience([A]), last, e1.id);
    assert.deepEqual(last.chunks, [frame(e5.id, RESYNC)], 'e2..e4 are gone: resync, carrying the newest id');
    const current = new FakeSink();
    hub.subscribe(audience([A]), current, e4.id);
    assert.deepEqual(current.ids, [e5.id]);
  });

  test('replay keeps at most replayMax events per channel', () => {
    const hub = makeHub({ replayMax: 3 });
    const incidents = Array.from({ length: 5 }, () => publish());
    const signals = Array.from({ length: 2 }, () => publish({ channel: 'signals' }));
    assert.equal(hub.stats().replayEntries, 3 + 2, 'the cap is per channel');

    const sink = new FakeSink();
    hub.subscribe(audience([A]), sink, incidents[1]!.id);
    assert.deepEqual(
      sink.ids,
      incidents.slice(2).map((e) => e.id),
    );
    const cut = new FakeSink();
    hub.subscribe(audience([A]), cut, incidents[0]!.id);
    assert.deepEqual(cut.chunks, [frame(signals[1]!.id, RESYNC)], 'incidents[1] was dropped by the cap: resync, not a partial window');
    const signalSink = new FakeSink();
    hub.subscribe(audience([A], 'live', 'signals'), signalSink, 0);
    assert.deepEqual(
      signalSink.ids,
      signals.map((e) => e.id),
    );
  });

  test('replay stays right after thousands of trimmed events (head compaction)', () => {
    const hub = makeHub({ replayMax: 10 });
    let last: LiveEvent | undefined;
    const all: LiveEvent[] = [];
    for (let i = 0; i < 5_000; i++) all.push((last = publish({ orgId: i % 2 === 0 ? A : B })));
    assert.ok(last);
    assert.equal(hub.stats().replayEntries, 10);
    const kept = all.slice(-10);

    const sink = new FakeSink();
    hub.subscribe(audience([A]), sink, kept[3]!.id);
    assert.deepEqual(
      sink.ids,
      kept.slice(4).filter((e) => e.orgId === A).map((e) => e.id),
    );
    const everything = new FakeSink();
    hub.subscribe(audience([A, B]), everything, all.at(-11)!.id);
    assert.deepEqual(
      everything.ids,
      kept.map((e) => e.id),
    );
    const beforeKept = new FakeSink();
    hub.subscribe(audience([A, B]), beforeKept, all.at(-12)!.id);
    assert.deepEqual(beforeKept.chunks, [frame(last.id, RESYNC)]);
  });

  test('a subscriber that stopped draining is destroyed and removed on the next write; the others keep receiving', () => {
    const hub = makeHub({ maxBufferedBytes: 1_000 });
    const slow = new FakeSink();
    const atLimit = new FakeSink();
    const fast = new FakeSink();
    const unsubscribeSlow = hub.subscribe(audience([A]), slow);
    hub.subscribe(audience([A]), atLimit);
    hub.subscribe(audience([A]), fast);

    const e1 = publish();
    assert.deepEqual(slow.ids, [e1.id]);

    slow.writableLength = 1_001;
    atLimit.writableLength = 1_000;
    assert.equal(slow.destroyed, false, 'nothing happens before a write');
    const e2 = publish();
    assert.equal(slow.destroyed, true);
    assert.deepEqual(slow.ids, [e1.id], 'the dropped subscriber got nothing more');
    assert.equal(atLimit.destroyed, false, 'exactly at the limit is still fine');
    assert.deepEqual(atLimit.ids, [e1.id, e2.id]);
    assert.deepEqual(fast.ids, [e1.id, e2.id]);

    const stats = hub.stats();
    assert.equal(stats.dropped, 1);
    assert.equal(stats.subscribers, 2);
    assert.equal(stats.maxBufferedSeen, 1_001);

    const e3 = publish();
    assert.deepEqual(fast.ids, [e1.id, e2.id, e3.id]);
    assert.deepEqual(slow.ids, [e1.id]);
    assert.equal(hub.stats().dropped, 1, 'dropped once, counted once');

    unsubscribeSlow(); // the response's close handler runs later: harmless
    assert.equal(hub.stats().subscribers, 2);
  });

  test('a subscriber of another audience is not dropped by an event it does not receive', () => {
    const hub = makeHub({ maxBufferedBytes: 100 });
    const other = new FakeSink();
    other.writableLength = 10_000;
    hub.subscribe(audience([B]), other);
    publish({ orgId: A });
    assert.equal(other.destroyed, false);
    assert.equal(hub.stats().dropped, 0);
    publish({ orgId: B });
    assert.equal(other.destroyed, true);
    assert.equal(hub.stats().dropped, 1);
    assert.equal(hub.stats().subscribers, 0);
  });

  test('unsubscribing stops the events', () => {
    const hub = makeHub();
    const sink = new FakeSink();
    const unsubscribe = hub.subscribe(audience([A]), sink);
    const e1 = publish();
    unsubscribe();
    publish();
    assert.deepEqual(sink.ids, [e1.id]);
    assert.equal(hub.stats().subscribers, 0);
    assert.equal(sink.destroyed, false);
  });

  test('heartbeat comments reach every subscriber every heartbeatMs', async () => {
    const hub = makeHub({ heartbeatMs: 20 });
    const one = new FakeSink();
    const two = new FakeSink();
    hub.subscribe(audience([A], 'live'), one);
    hub.subscribe(audience([B], 'test', 'signals'), two);

    const deadline = Date.now() + 2_000;
    while ((one.chunks.length < 2 || two.chunks.length < 2) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(one.chunks.length >= 2, `two heartbeats within 2 s (got ${one.chunks.length})`);
    assert.ok(two.chunks.length >= 1);
    for (const chunk of [...one.chunks, ...two.chunks]) assert.equal(chunk, ': heartbeat\n\n');
    assert.deepEqual(one.ids, []);
  });

  test('a heartbeat drops a subscriber that stopped draining', async () => {
    const hub = makeHub({ heartbeatMs: 20, maxBufferedBytes: 100 });
    const slow = new FakeSink();
    slow.writableLength = 101;
    hub.subscribe(audience([A]), slow);
    const deadline = Date.now() + 2_000;
    while (!slow.destroyed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(slow.destroyed, true);
    assert.deepEqual(slow.chunks, []);
    assert.equal(hub.stats().dropped, 1);
    assert.equal(hub.stats().subscribers, 0);
  });

  test('disconnectAll() destroys every sink; close() also stops listening to the bus', () => {
    const hub = makeHub();
    const sinks = [new FakeSink(), new FakeSink(), new FakeSink()];
    hub.subscribe(audience([A]), sinks[0]!);
    hub.subscribe(audience([B], 'test'), sinks[1]!);
    hub.subscribe(audience([A], 'live', 'signals'), sinks[2]!);
    publish();

    hub.disconnectAll();
    assert.deepEqual(
      sinks.map((s) => s.destroyed),
      [true, true, true],
    );
    assert.equal(hub.stats().subscribers, 0);
    assert.equal(hub.stats().dropped, 0, 'a shutdown is not a drop');

    publish(); // nobody left to write to (FakeSink.write would throw if destroyed)
    assert.equal(hub.stats().replayEntries, 2, 'events are still kept for replay after disconnectAll');

    const late = new FakeSink();
    hub.subscribe(audience([A]), late);
    hub.close();
    assert.equal(late.destroyed, true);
    publish();
    assert.equal(hub.stats().replayEntries, 2, 'a closed hub no longer hears the bus');
  });

  test('an event no stream waits for is not serialised until a client resumes before it, then once', (t) => {
    const hub = makeHub();
    const stringify = t.mock.method(JSON, 'stringify');
    const quiet = publish({ orgId: A, type: 'incident.updated', payload: { Id: 8, title: 'nobody listens' } });
    publish({ orgId: B });
    assert.equal(stringify.mock.callCount(), 0, 'kept for replay, not serialised');

    const first = new FakeSink();
    hub.subscribe(audience([A]), first, quiet.id - 1);
    assert.equal(stringify.mock.callCount(), 1, 'serialised for the replay that needs it (the other org is not)');
    const second = new FakeSink();
    hub.subscribe(audience([A]), second, quiet.id - 1);
    assert.equal(stringify.mock.callCount(), 1, 'a second replay reuses the text');
    stringify.mock.restore();
    const text = `id: ${quiet.id}\ndata: {"type":"incident.updated","payload":{"Id":8,"title":"nobody listens"}}\n\n`;
    assert.deepEqual(first.frames, [text]);
    assert.deepEqual(second.frames, [text]);

    // Once a stream listens, its events are serialised as they go out, and a resume reuses that text.
    const live = publish({ orgId: A });
    assert.deepEqual(first.ids, [quiet.id, live.id]);
    const third = new FakeSink();
    const stringifyAgain = t.mock.method(JSON, 'stringify');
    hub.subscribe(audience([A]), third, quiet.id);
    assert.equal(stringifyAgain.mock.callCount(), 0);
    stringifyAgain.mock.restore();
    assert.deepEqual(third.frames, [first.frames[1]]);
  });

  test('a subscriber of two orgs gets each event once, and none after it leaves, is dropped or revoked', () => {
    const hub = makeHub();
    const left = new FakeSink();
    const slow = new FakeSink();
    const revoked = new FakeSink();
    const stays = new FakeSink();
    const unsubscribe = hub.subscribe(audience([A, B]), left);
    hub.subscribe(audience([A, B]), slow);
    hub.subscribe(audience([A, B]), revoked, undefined, { userId: 7, keyId: 70 });
    hub.subscribe(audience([A, B]), stays);
    const e1 = publish({ orgId: A });
    const e2 = publish({ orgId: B });
    for (const sink of [left, slow, revoked, stays]) assert.deepEqual(sink.ids, [e1.id, e2.id]);

    unsubscribe();
    slow.writableLength = OPTIONS.maxBufferedBytes + 1;
    publish({ orgId: A }); // drops the slow one
    hub.endAccess({ keyId: 70 });
    assert.equal(hub.stats().subscribers, 1);
    const e4 = publish({ orgId: B });
    const e5 = publish({ orgId: A });
    assert.deepEqual(left.ids, [e1.id, e2.id]);
    assert.deepEqual(slow.ids, [e1.id, e2.id]);
    assert.deepEqual(revoked.ids.slice(-1), [e1.id + 2], 'the revoked one got the event before its revocation, none after');
    assert.deepEqual(stays.ids.slice(-2), [e4.id, e5.id]);
    assert.equal(hub.subscribersByChannel().get('incidents'), 1);
  });

  test("each stream's write is corked and uncorked at once, so it leaves in one syscall without a tick per socket", () => {
    const hub = makeHub({ heartbeatMs: 60_000 });
    const calls: string[] = [];
    const sink: Sink = {
      writableLength: 0,
      write: (chunk) => (calls.push(`write ${chunk.startsWith('id: ') ? 'frame' : chunk}`), true),
      cork: () => void calls.push('cork'),
      uncork: () => void calls.push('uncork'),
      destroy: () => undefined,
    };
    const plain = new FakeSink(); // a sink without cork() still gets plain writes
    hub.subscribe(audience([A]), sink);
    hub.subscribe(audience([A]), plain);
    publish();
    publish();
    assert.deepEqual(calls, ['cork', 'write frame', 'uncork', 'cork', 'write frame', 'uncork']);
    assert.equal(plain.frames.length, 2);
  });
});

describe('createIdSource', () => {
  test('ids strictly increase, even within one millisecond and when the clock goes backwards, and never fall below now() * 1000', () => {
    let now = 1_700_000_000_000;
    const next = createIdSource(() => now);
    const ids: number[] = [];
    const take = () => {
      const id = next();
      assert.ok(id >= now * 1000, `${id} is not below now() * 1000 (${now * 1000})`);
      assert.ok(Number.isSafeInteger(id), `${id} is a safe integer`);
      if (ids.length > 0) assert.ok(id > ids.at(-1)!, `${id} > ${ids.at(-1)}`);
      ids.push(id);
      return id;
    };

    assert.equal(take(), now * 1000);
    take();
    take(); // same millisecond: the counter goes on
    now += 1;
    assert.equal(take(), now * 1000, 'a new millisecond starts at now() * 1000');
    now -= 5_000; // the clock jumps back
    take();
    take();
    now += 5_000;
    take();
    now += 10;
    assert.equal(take(), now * 1000);
    for (let i = 0; i < 2_500; i++) take(); // more than 1000 in one millisecond
    now += 1; // the counter already ran past this millisecond
    take();
    assert.equal(new Set(ids).size, ids.length);
  });

  test('a source started later (after a restart) issues ids above those of an earlier one', () => {
    let now = 1_700_000_000_000;
    const before = createIdSource(() => now);
    const old = [before(), before(), before()];
    now += 1;
    const after = createIdSource(() => now);
    assert.ok(after() > Math.max(...old));
  });

  test('defaults to the wall clock', () => {
    const next = createIdSource();
    const lower = Date.now() * 1000;
    const id = next();
    const upper = Date.now() * 1000;
    assert.ok(id >= lower && id <= upper, `${id} in [${lower}, ${upper}]`);
    assert.ok(next() > id);
  });
});

// Issue #32: the `connected` frame carries the stream's position, so a client that drops before any
// event resumes from it: every event dispatched later has a greater id, none before it does.
describe('Hub.position', () => {
  let hub: Hub | undefined;
  afterEach(() => hub?.close());

  test('one instance: below the next id given out (even in the same millisecond), never below resumeFloor', () => {
    let now = 1_700_000_000_000;
    const ids = createIdSource(() => now);
    hub = new Hub(createLocalBus(ids), { ...OPTIONS, resumeFloor: now * 1000 }, () => now);
    assert.ok(hub.position() >= now * 1000 - 1);
    ids();
    ids();
    const position = hub.position();
    assert.ok(position < ids(), 'an event given an id in the same millisecond comes after it');
    now += 1;
    assert.ok(hub.position() < ids());
    const sink = new FakeSink();
    hub.subscribe(audience([A]), sink, position);
    assert.deepEqual(sink.frames, [], 'a resume from the position is not a resync');
  });

  test('with a shared store: a margin behind this clock, so a shared clock a little behind ours skips nothing', () => {
    const now = 1_700_000_000_000;
    const bus: EventBus = Object.assign(createLocalBus(), { replay: () => Promise.resolve({ events: [], complete: true }) });
    hub = new Hub(bus, OPTIONS, () => now);
    const position = hub.position();
    assert.ok(position < (now - 500) * 1000, 'an event stamped half a second behind this clock is still after it');
    bus.publish({ id: now * 1000 + 5, channel: 'incidents', orgId: A, mode: 'live', type: 'x', payload: {} });
    assert.equal(hub.position(), now * 1000 + 5, 'once an event is seen, its id');
  });
});
