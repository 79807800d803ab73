import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from './helpers.js';

interface Operation {
  security?: unknown[];
  responses: Record<string, unknown>;
  requestBody?: unknown;
}
interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
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
      assert.ok(op.responses['4XX'] ?? op.responses['4xx'], `${route} documents its 4xx body`);
    }
  });

  test('marks public routes as needing no credential and leaves the rest to the global security', () => {
    assert.deepEqual(doc.paths['/v1/users']!.post!.security, []);
    assert.deepEqual(doc.paths['/v1/auth/login']!.post!.security, []);
    assert.equal(doc.paths['/v1/auth/me']!.get!.security, undefined);
  });

  test('serves the interactive docs page without a credential', async () => {
    const res = await t.app.inject({ url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
  });
});
