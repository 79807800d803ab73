import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { generatedOperationId, OPERATION_IDS } from '../src/plugins/operation-ids.js';
import { body, buildTestApp, type TestApp } from './helpers.js';

interface Operation {
  operationId?: string;
  security?: unknown[];
  parameters?: { in: string; name: string }[];
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }>;
  requestBody?: unknown;
}
interface OpenApi {
  openapi: string;
  info: { license?: { name: string } };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown>; responses: Record<string, unknown> };
}

function operations(doc: OpenApi): [key: string, op: Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op]));
}

/** Every object in the document with a `title`: what finishDocument could not make a component. */
function titled(node: unknown, at: string, found: string[]): string[] {
  if (Array.isArray(node)) node.forEach((n, i) => titled(n, `${at}/${i}`, found));
  else if (typeof node === 'object' && node !== null) {
    const o = node as Record<string, unknown>;
    if (typeof o.title === 'string' && 'type' in o) found.push(`${at} (${o.title})`);
    for (const [k, v] of Object.entries(o)) titled(v, `${at}/${k}`, found);
  }
  return found;
}

describe('OpenAPI', () => {
  let t: TestApp;
  let doc: OpenApi;
  before(async () => {
    t = await buildTestApp();
    const res = await t.app.inject({ url: '/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = body<OpenApi>(res);
  });
  after(() => t.close());

  test('is OpenAPI 3.1 with the three credential forms', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'bearer', 'session']);
  });

  test('documents every API route with its error body', () => {
    const expected = [
      'post /v1/users',
      'get /v1/users',
      'patch /v1/users/{id}',
      'get /v1/u/{slug}',
      'post /v1/auth/login',
      'post /v1/auth/logout',
      'get /v1/auth/me',
      'patch /v1/auth/me',
      'post /v1/auth/magic-link',
      'post /v1/auth/magic-link/verify',
      'post /v1/api-keys',
      'get /v1/api-keys',
      'delete /v1/api-keys/{id}',
      'get /healthz',
      'get /readyz',
    ];
    for (const route of expected) {
      const [method, path] = route.split(' ') as [string, string];
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${route} is documented`);
      assert.ok(op.responses['4XX'], `${route} documents its 4xx body`);
    }
  });

  test('marks public routes as needing no credential and states the credentials on every other operation', () => {
    assert.deepEqual(doc.paths['/v1/users']!.post!.security, []);
    assert.deepEqual(doc.paths['/v1/auth/login']!.post!.security, []);
    assert.deepEqual(doc.paths['/v1/bookings/{token}/confirm']!.get!.security, []);
    assert.deepEqual(doc.paths['/v1/auth/me']!.get!.security, [{ apiKey: [] }, { bearer: [] }, { session: [] }]);
    for (const [key, op] of operations(doc)) {
      assert.ok(Array.isArray(op.security), `${key} states its security`);
      if (op.security.length > 0) assert.ok(op.responses['401'], `${key} documents 401`);
    }
  });

  test('has a license and a server', () => {
    assert.equal(doc.info.license?.name, 'AGPL-3.0-only');
    assert.equal(doc.servers?.[0]?.url, 'http://muster.test');
  });

  test('names every operation with a stable, unique camelCase operationId from the table', () => {
    const seen = new Map<string, string>();
    const missing: string[] = [];
    for (const [key, op] of operations(doc)) {
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]*$/, `${key} has a camelCase operationId`);
      assert.ok(!seen.has(op.operationId!), `${key} and ${seen.get(op.operationId!)} share ${op.operationId}`);
      seen.set(op.operationId!, key);
      if (OPERATION_IDS[key] === undefined) missing.push(`  '${key}': '${op.operationId}',`);
      else assert.equal(op.operationId, OPERATION_IDS[key], `${key} keeps its operationId`);
    }
    assert.deepEqual(missing, [], `routes not in src/plugins/operation-ids.ts (add them, with a better name than the generated one):\n${missing.join('\n')}`);
    const stale = Object.keys(OPERATION_IDS).filter((key) => !seen.has(OPERATION_IDS[key]!) || seen.get(OPERATION_IDS[key]!) !== key);
    assert.deepEqual(stale, [], 'every entry of the table is a documented route');
    assert.equal(OPERATION_IDS['GET /v1/tickets'], 'listTickets');
    assert.equal(OPERATION_IDS['POST /v1/bookings'], 'createBooking');
  });

  test('a route missing from the table still gets a deterministic camelCase operationId', () => {
    assert.equal(generatedOperationId('post', '/v1/orgs/{org_slug}/exports'), 'postOrgsByOrgSlugExports');
    assert.equal(generatedOperationId('get', '/v1/metrics'), 'getMetrics');
  });

  test('names every resource and error as a component and refers to it', () => {
    const expected = ['Incident', 'Reply', 'Signal', 'Beacon', 'Booking', 'Slot', 'EventType', 'Org', 'Team', 'Member', 'User', 'ApiKey', 'Delivery', 'Error', 'ValidationError'];
    expected.push('Integration', 'Device', 'Calendar', 'TimelineEvent', 'IncidentStreamEvent', 'SignalStreamEvent');
    for (const name of expected) assert.ok(doc.components.schemas[name], `components.schemas.${name}`);
    assert.deepEqual(Object.keys(doc.components.schemas).filter((n) => n.startsWith('def-')), [], 'no anonymous def-N schemas');
    assert.deepEqual(titled(doc.paths, '#/paths', []), [], 'no titled schema left inline (two different shapes under one title?)');
    const incident = doc.paths['/v1/incidents/{id}']!.get!.responses['200']!.content!['application/json']!.schema;
    assert.deepEqual(incident, { $ref: '#/components/schemas/Incident' });
    assert.deepEqual(doc.paths['/v1/incidents/{id}']!.get!.responses['404'], { $ref: '#/components/responses/NotFound' });
    assert.deepEqual(doc.paths['/v1/incidents']!.post!.responses['422'], { $ref: '#/components/responses/ValidationFailed' });
  });

  test('documents the streams, the calendar feed and the decision links by their media types', () => {
    for (const [path, schema] of [
      ['/v1/incidents/stream', 'IncidentStreamEvent'],
      ['/v1/tickets/stream', 'IncidentStreamEvent'],
      ['/v1/signals/stream', 'SignalStreamEvent'],
    ] as const) {
      assert.deepEqual(doc.paths[path]!.get!.responses['200']!.content, { 'text/event-stream': { schema: { $ref: `#/components/schemas/${schema}` } } }, path);
    }
    assert.ok(doc.paths['/calendar/{token}']!.get!.responses['200']!.content!['text/calendar'], 'the ICS feed');
    for (const decision of ['confirm', 'decline']) {
      for (const method of ['get', 'post']) {
        const content = doc.paths[`/v1/bookings/{token}/${decision}`]![method]!.responses['200']!.content!;
        assert.deepEqual(content['application/json'], { schema: { $ref: '#/components/schemas/Booking' } });
        assert.ok(content['text/html'], `${method} ${decision} answers a page`);
      }
    }
  });

  test('every operation documents a success answer and its errors by status', () => {
    for (const [key, op] of operations(doc)) {
      assert.ok(Object.keys(op.responses).some((s) => /^2/.test(s)), `${key} documents a 2xx answer`);
      assert.ok(op.responses['5XX'], `${key} documents 5XX`);
      if (op.parameters?.some((p) => p.in === 'path')) assert.ok(op.responses['404'], `${key} documents 404`);
      if (op.requestBody) assert.ok(op.responses['422'] && op.responses['400'], `${key} documents 400 and 422`);
    }
  });

  test('serves the interactive docs page without a credential', async () => {
    const res = await t.app.inject({ url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
  });

  test('the test helper fails a test whose answers stray from their documented schemas', async () => {
    const u = await buildTestApp();
    const response = { 200: Type.Object({ state: Type.Unsafe<string>({ type: 'string', enum: ['open'] }) }) };
    u.app.get('/v1/zz-enum', { config: { public: true }, schema: { response } }, () => ({ state: 'ajar' }));
    u.app.get('/v1/zz-status', { config: { public: true }, schema: { response } }, (_req, reply) => reply.status(202 as 200).send({ state: 'open' }));
    u.app.get('/v1/zz-fine', { config: { public: true }, schema: { response } }, () => ({ state: 'open' }));
    for (const url of ['/v1/zz-enum', '/v1/zz-status', '/v1/zz-fine', '/v1/incidents/1']) await u.app.inject({ url });
    await assert.rejects(u.close(), (err: Error) => {
      assert.match(err.message, /GET \/v1\/zz-enum answered 200 with a body its schema does not allow: \/state must be equal to one of the allowed values/);
      assert.match(err.message, /GET \/v1\/zz-status answered 202, a status \(or media type\) its schema does not document/);
      assert.doesNotMatch(err.message, /zz-fine|incidents/, 'matching answers and documented errors pass');
      return true;
    });
  });
});
