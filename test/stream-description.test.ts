import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { LiveEvent } from '../src/events/bus.js';
import { buildTestApp, injector, type TestApp } from './helpers.js';
import { signUp, type TestUser } from './factories.js';
import { connectSse, eventOf, listen, type SseClient } from './sse-client.js';

// Issue #32: the incident stream's description left out `incident.timeline`, so every timeline event
// failed validation in a generated client, which had no type for it. Here every event the server
// publishes on each stream, and the frames the streams write themselves (`connected`, `resync`), is
// validated against the union the API description gives for that stream's `text/event-stream`.

interface OpenApi {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  components: Record<string, unknown>;
}

const STREAMS = { incidents: '/v1/incidents/stream', signals: '/v1/signals/stream' } as const;

describe('every event a stream carries is in its API description', () => {
  let t: TestApp;
  let doc: OpenApi;
  let user: TestUser;
  let port: number;
  const published: LiveEvent[] = [];
  const clients: SseClient[] = [];
  const pathOf = new Map<SseClient, string>();
  const { ok } = injector(() => t.app);

  before(async () => {
    t = await buildTestApp();
    doc = (await t.app.inject({ url: '/v1/openapi.json' })).json<OpenApi>();
    user = await signUp(t.app, { name: 'Stream Reader' });
    t.ctx.events.bus.subscribe((e) => published.push(e));
    port = await listen(t);
  });
  after(async () => {
    for (const c of clients) await c.close();
    await t.close();
  });

  /** The description's schema of one stream's `data:` lines, compiled with the document's components. */
  function validatorOf(path: string): { validate: ValidateFunction; types: string[] } {
    const schema = doc.paths[path]!.get!.responses['200']!.content!['text/event-stream']!.schema as { $ref: string };
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const validate = ajv.compile({ $ref: `doc${schema.$ref}` });
    const union = (doc.components.schemas as Record<string, { anyOf?: unknown[]; oneOf?: unknown[] }>)[schema.$ref.split('/').pop()!]!;
    const resolve = (s: unknown) => {
      const ref = (s as { $ref?: string }).$ref;
      return (ref ? (doc.components.schemas as Record<string, unknown>)[ref.split('/').pop()!] : s) as { properties: { type: { const?: string; enum?: string[] } } };
    };
    const types = (union.anyOf ?? union.oneOf ?? []).map((m) => {
      const type = resolve(m).properties.type;
      return type.const ?? type.enum![0]!;
    });
    return { validate, types };
  }

  async function driveEveryEvent(headers: Record<string, string>) {
    const incident = await ok<{ Id: number; org_id: number }>('POST', '/v1/incidents', headers, { title: 'Hydrant leaking', priority: 'high', lat: 52.37, lng: 4.89 });
    await ok('PATCH', `/v1/incidents/${incident.Id}`, headers, { status: 'in_progress', priority: 'urgent', description: 'now flooding' });
    await ok('PATCH', `/v1/incidents/${incident.Id}`, headers, { assignee_id: user.id });
    await ok('POST', `/v1/incidents/${incident.Id}/acknowledge`, headers);
    await ok('POST', `/v1/incidents/${incident.Id}/progress`, headers, { state: 'en_route', lat: 52.36, lng: 4.88 });
    await ok('POST', `/v1/incidents/${incident.Id}/replies`, headers, { body: 'On my way', public: true });
    const meta = { device_id: 'phone-1' };
    // A site around the hydrant: the first beacon enters it, the third (15 km away) leaves it.
    const org = (await ok<{ orgs: { id: number; slug: string }[] }>('GET', '/v1/orgs', headers)).orgs.find((o) => o.id === incident.org_id)!;
    await ok('POST', `/v1/orgs/${org.slug}/sites`, headers, { name: 'Hydrant block', lat: 52.37, lng: 4.89, radius_m: 2000 });
    await ok('POST', '/v1/signals', headers, { type: 'beacon', lat: 52.37, lng: 4.89, accuracy: 5, meta });
    await ok('POST', '/v1/signals', headers, { type: 'beacon', lat: 52.38, lng: 4.9, accuracy: 5, meta });
    await ok('POST', '/v1/signals', headers, { type: 'beacon', lat: 52.5, lng: 5.0, accuracy: 5, meta });
    await t.ctx.sites.idle();
    await ok('POST', '/v1/signals', headers, { type: 'capture', image_url: 'https://images.example.com/hydrant.jpg', lat: 52.37, lng: 4.89, ticket_id: incident.Id });
    await ok('POST', '/v1/signals', headers, { type: 'note', note: 'Water to the ankles' });
    await ok('POST', '/v1/signals', headers, { type: 'checkin', lat: 52.37, lng: 4.89 });
    await ok('POST', '/v1/signals', headers, { type: 'alert', note: 'Second hydrant gone', lat: 52.37, lng: 4.89 });
    await ok('DELETE', '/v1/signals/beacon', headers, { device_id: 'phone-1' });
  }

  test('each published event and each stream frame validates against its stream’s union, and the union has nothing unused', async () => {
    const headers = { cookie: user.cookie };
    for (const path of Object.values(STREAMS)) {
      const opened = await connectSse(port, path, headers);
      clients.push(opened);
      pathOf.set(opened, path);
      await opened.waitForEvent('connected');
    }
    await driveEveryEvent(headers);
    // A resume from before this instance started: the stream answers `resync` after `connected`.
    for (const path of Object.values(STREAMS)) {
      const resumed = await connectSse(port, `${path}?last_event_id=1`, headers);
      clients.push(resumed);
      pathOf.set(resumed, path);
      await resumed.waitForEvent('resync');
    }

    for (const [channel, path] of Object.entries(STREAMS)) {
      const { validate, types } = validatorOf(path);
      const frames = clients.filter((c) => pathOf.get(c) === path).flatMap((c) => c.frames.flatMap((f) => (f.data === undefined ? [] : [f.data])));
      const events = published.filter((e) => e.channel === channel).map((e) => JSON.parse(JSON.stringify({ type: e.type, payload: e.payload })) as unknown);
      const seen = new Set<string>();
      for (const data of [...frames, ...events]) {
        const type = (data as { type: string }).type;
        seen.add(type);
        assert.ok(validate(data), `${path}: ${type} does not match the description: ${JSON.stringify(validate.errors?.slice(0, 3))}\n${JSON.stringify(data).slice(0, 400)}`);
      }
      assert.deepEqual([...seen].sort(), [...types].sort(), `${path}: the scenario publishes every type the description names, and no other`);
    }
    assert.ok(published.some((e) => e.type === 'incident.timeline'), 'timeline events were published');
    assert.equal(eventOf(clients[0]!.frames[0]!)?.type, 'connected');
  });
});
