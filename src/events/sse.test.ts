import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Fastify from 'fastify';
import { createLocalBus } from './bus.js';
import { Hub } from './hub.js';
import { openStream } from './sse.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test("an open stream does not keep Fastify's request and reply (nor their logger) alive, nor its sent header map", async () => {
  const bus = createLocalBus();
  const hub = new Hub(bus, { heartbeatMs: 60_000, replayMs: 60_000, replayMax: 100, maxBufferedBytes: 1_000_000 });
  const app = Fastify({ logger: { level: 'silent' } });
  let requestRef: WeakRef<object> | undefined;
  let replyRef: WeakRef<object> | undefined;
  let raw: http.ServerResponse | undefined;
  app.get('/stream', (request, reply) => {
    requestRef = new WeakRef(request);
    replyRef = new WeakRef(reply);
    reply.raw.setHeader('x-content-type-options', 'nosniff'); // as the security-headers hook does
    openStream(request, reply, hub, { channel: 'incidents', orgIds: new Set([1]), mode: 'live' });
    raw = reply.raw;
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const req = http.get({ host: '127.0.0.1', port, path: '/stream' });
  try {
    const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(res.headers['x-content-type-options'], 'nosniff', 'a header set before the stream opened is sent');
    assert.ok(res.headers['x-request-id']);
    // Once sent, the head is not kept twice: no header map, one flat string.
    assert.deepEqual(raw?.getHeaderNames(), []);
    assert.equal(raw?.headersSent, true);
    // The stream is open and held by the hub.
    await new Promise<void>((resolve) => res.once('data', () => resolve()));
    assert.equal(hub.stats().subscribers, 1);

    // WeakRefs hold their target until the current job ends: collect from a fresh macrotask, a few times.
    for (let i = 0; i < 5 && (requestRef?.deref() || replyRef?.deref()); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    assert.equal(requestRef?.deref(), undefined, "Fastify's request was collected while the stream is open");
    assert.equal(replyRef?.deref(), undefined, "Fastify's reply was collected while the stream is open");

    // The stream still works.
    const got = new Promise<string>((resolve) => res.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    bus.publish({ channel: 'incidents', orgId: 1, mode: 'live', type: 'incident.created', payload: { n: 1 } });
    assert.match(await got, /"type":"incident.created"/);
    assert.equal(hub.stats().subscribers, 1);
  } finally {
    req.destroy();
    hub.close();
    await app.close();
    await bus.close();
  }
});
