import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EventSource, type EventSourceFetchInit } from 'eventsource';
import { buildTestApp, injector, type TestApp } from './helpers.js';
import { signUp, type TestUser } from './factories.js';
import { listen, within } from './sse-client.js';

// Issue #32: the first `connected` frame carried no `id:`, so a client that dropped before any real
// event reconnected with nothing to resume from, and an incident created in the gap reached it 0
// times (no resync either). The `eventsource` package (what Node clients use) drives the reconnect
// here, with the Last-Event-ID it keeps, as a browser's EventSource does.

interface Message {
  type: string;
  payload?: { Id?: number; note?: string };
}

/**
 * A fetch for `eventsource`: sends the session cookie and records each request's Last-Event-ID. The
 * server asks clients to wait 3 s before reconnecting (`retry: 3000`); the test shortens that wait to
 * 20 ms in what reaches the client, to keep the suite fast. The reconnect itself is the package's.
 */
function fetchWith(cookie: string, sent: (string | null)[]) {
  return async (url: string | URL, init: EventSourceFetchInit) => {
    const headers = new Headers(init.headers);
    headers.set('cookie', cookie);
    sent.push(headers.get('last-event-id'));
    const res = await fetch(url, { ...init, headers });
    const body = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(
      new TransformStream<string, string>({ transform: (chunk, c) => c.enqueue(chunk.replace(/^retry: \d+$/m, 'retry: 20')) }),
    );
    return new Response(body.pipeThrough(new TextEncoderStream()), { status: res.status, headers: res.headers });
  };
}

describe('a stream that drops before its first event resumes from its connected frame’s id', () => {
  let t: TestApp;
  let user: TestUser;
  let base: string;
  const { ok } = injector(() => t.app);
  const sources: EventSource[] = [];

  before(async () => {
    t = await buildTestApp();
    user = await signUp(t.app, { name: 'Resuming Reader' });
    base = `http://127.0.0.1:${await listen(t)}`;
  });
  after(async () => {
    for (const s of sources) s.close();
    await t.close();
  });

  /** Opens an EventSource; `next(predicate)` resolves with the first message (kept or coming) that matches. */
  function open(path: string) {
    const sent: (string | null)[] = [];
    const source = new EventSource(`${base}${path}`, { fetch: fetchWith(user.cookie, sent) });
    sources.push(source);
    const messages: { data: Message; lastEventId: string }[] = [];
    const waiting = new Set<() => void>();
    source.addEventListener('message', (e) => {
      messages.push({ data: JSON.parse(e.data as string) as Message, lastEventId: e.lastEventId });
      for (const w of [...waiting]) w();
    });
    let errors = 0;
    source.addEventListener('error', () => {
      errors += 1;
      for (const w of [...waiting]) w();
    });
    const until = (check: () => boolean, what: string) =>
      within(
        new Promise<void>((resolve) => {
          const w = () => {
            if (!check()) return;
            waiting.delete(w);
            resolve();
          };
          waiting.add(w);
          w();
        }),
        5_000,
        what,
      );
    const count = (test: (m: Message) => boolean) => messages.filter((m) => test(m.data)).length;
    return { source, sent, messages, count, until, errors: () => errors };
  }

  for (const [path, gap, after] of [
    [
      '/v1/incidents/stream',
      async () => ok<{ Id: number }>('POST', '/v1/incidents', { cookie: user.cookie }, { title: 'Created in the gap' }),
      async () => ok<{ Id: number }>('POST', '/v1/incidents', { cookie: user.cookie }, { title: 'After the reconnect' }),
    ],
    [
      '/v1/signals/stream',
      async () => ({ Id: (await ok<{ Id: number }>('POST', '/v1/signals', { cookie: user.cookie }, { type: 'note', note: 'Posted in the gap' })).Id }),
      async () => ({ Id: (await ok<{ Id: number }>('POST', '/v1/signals', { cookie: user.cookie }, { type: 'note', note: 'After the reconnect' })).Id }),
    ],
  ] as const) {
    test(`${path}: dropped after connected, an event of the gap is delivered once on the reconnect`, async () => {
      const s = open(path);
      await s.until(() => s.count((m) => m.type === 'connected') === 1, 'the connected event');
      const position = s.messages[0]!.lastEventId;

      // The connection drops (here: the server ends every stream, as a restart or a proxy would).
      t.ctx.events.hub.disconnectAll();
      await s.until(() => s.errors() >= 1, 'the client noticing the drop');
      const missed = await gap();

      await s.until(() => s.count((m) => m.type === 'connected') === 2, 'the reconnect');
      const later = await after();
      const isEvent = (id: number) => (m: Message) => m.type !== 'connected' && m.payload?.Id === id;
      await s.until(() => s.count(isEvent(later.Id)) === 1, 'the event after the reconnect');
      assert.equal(s.count(isEvent(missed.Id)), 1, 'the event of the gap arrived, once');
      assert.match(position, /^\d+$/, 'the connected frame carries the stream’s position');
      assert.deepEqual(s.sent, [null, position], 'the reconnect sent the connected frame’s id as Last-Event-ID');
      assert.equal(s.count((m) => m.type === 'resync'), 0, 'nothing was lost, so no resync');
      const order = s.messages.map((m) => m.data.payload?.Id).filter((id) => id === missed.Id || id === later.Id);
      assert.deepEqual(order, [missed.Id, later.Id]);
      s.source.close();
    });
  }
});
