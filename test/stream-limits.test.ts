import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Headers, type TestApp } from './helpers.js';
import { createKey, signUp } from './factories.js';
import { eventOf, listen, until, StreamSet } from './sse-client.js';

// Issue #14 items 8 and 14: a per-user cap on concurrent streams (STREAM_LIMIT_PER_USER, 429 with
// Retry-After), the SSE retry: field, and a resync event for a Last-Event-ID the replay no longer covers.

describe('stream cap, retry and resync', () => {
  let t: TestApp;
  let port: number;
  const streams = new StreamSet(() => port, '/v1/incidents/stream');

  before(async () => {
    t = await buildTestApp({ SSE_HEARTBEAT_MS: '50', STREAM_LIMIT_PER_USER: '4' });
    port = await listen(t);
  });
  after(async () => {
    await streams.closeAll();
    await t.close();
  });

  const connect = (headers: Headers, path?: string) => streams.connect(headers, path);
  const open = (headers: Headers, path?: string) => streams.open(headers, path);

  test('a user’s fifth concurrent stream (keys of both modes and sessions together, both channels) is 429 with Retry-After', async () => {
    const user = await signUp(t.app);
    const live = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    const testKey = { 'x-api-key': (await createKey(t.app, user.cookie, 'test')).key };
    const held = [await open(live), await open(testKey, '/v1/signals/stream'), await open({ cookie: user.cookie }), await open(live, '/v1/tickets/stream')];

    const res = await fetch(`http://127.0.0.1:${port}/v1/signals/stream`, { headers: live });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '5');
    assert.deepEqual(await res.json(), { error: 'Too many requests', code: 'rate_limited' });

    const other = await signUp(t.app);
    await open({ cookie: other.cookie }); // another user's cap is their own

    const before = t.ctx.events.hub.stats().subscribers;
    await held[0]!.close();
    await until(() => t.ctx.events.hub.stats().subscribers === before - 1, 'the server saw the stream close');
    await open(live); // the slot is free again
  });

  test('under concurrent opens exactly the cap succeeds', async () => {
    const user = await signUp(t.app);
    const key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
    const all = await Promise.all(Array.from({ length: 20 }, () => connect(key)));
    assert.deepEqual(
      all.map((c) => c.status).sort(),
      [...Array<number>(4).fill(200), ...Array<number>(16).fill(429)],
    );
    await Promise.all(all.filter((c) => c.status === 429).map((c) => c.close()));
  });

  test('the connected event carries retry:, so clients wait before reconnecting', async () => {
    const user = await signUp(t.app);
    const c = await open({ cookie: user.cookie });
    assert.equal(c.frames[0]!.retry, 3_000);
    assert.equal(eventOf(c.frames[0]!)?.type, 'connected');
  });

  test('a Last-Event-ID older than the replay keeps answers a resync event instead of a partial replay', async () => {
    const user = await signUp(t.app);
    const headers = { cookie: user.cookie };
    const watching = await open(headers);
    const created = await t.app.inject({ method: 'POST', url: '/v1/incidents', headers, payload: { title: 'Kept' } });
    assert.equal(created.statusCode, 201, created.body);
    const kept = await watching.waitForEvent('incident.created');
    // The creation's timeline event follows it: that is the newest id.
    const newest = await watching.waitForEvent('incident.timeline');

    // An id from before this instance started: events between it and the start may be lost.
    const stale = await open({ ...headers, 'last-event-id': '1' });
    const resync = await stale.waitForEvent('resync');
    assert.deepEqual(eventOf(resync), { type: 'resync' });
    assert.equal(resync.id, newest.id, 'it carries the newest id, so the next reconnect resumes from there');
    assert.deepEqual(
      stale.events.map((e) => e.type),
      ['connected', 'resync'],
      'nothing of the partial window is replayed',
    );

    const resumed = await open({ ...headers, 'last-event-id': String(kept.id! - 1) });
    await resumed.waitForEvent('incident.created');
    assert.ok(!resumed.events.some((e) => e.type === 'resync'), 'a resume the replay covers gets its events, no resync');
  });
});
