import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { body, buildTestApp, type TestApp } from './helpers.js';
import { signUp } from './factories.js';

// The error contract of docs/api.md ("Errors"), one body per status.
describe('error contract', () => {
  let t: TestApp;
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  before(async () => {
    t = await buildTestApp({ BODY_LIMIT_BYTES: '2048' }, { log: pino({ level: 'error' }, sink) });
    // A route that fails the way a bug would, with a message that must never reach the client.
    t.app.get('/test/boom', { config: { public: true } }, () => {
      throw new Error('database password is hunter2');
    });
  });
  after(() => t.close());

  test('400 for a body that is not valid JSON', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/users', headers: { 'content-type': 'application/json' }, payload: '{"email":' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(body(res), { error: 'Malformed JSON', code: 'bad_request' });
  });

  test('401 without a credential', async () => {
    const res = await t.app.inject({ url: '/v1/auth/me' });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(body(res), { error: 'Unauthorized', code: 'unauthorized' });
  });

  test('403 for a role the caller lacks', async () => {
    await signUp(t.app); // the first user is the admin
    const user = await signUp(t.app);
    const res = await t.app.inject({ url: '/v1/users', headers: { cookie: user.cookie } });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(body(res), { error: 'Forbidden', code: 'forbidden' });
  });

  test('404 for an unknown route, with or without a credential, and for an unknown method', async () => {
    const user = await signUp(t.app);
    for (const res of [
      await t.app.inject({ url: '/v1/nothing-here' }),
      await t.app.inject({ url: '/v1/nothing-here', headers: { cookie: user.cookie } }),
      await t.app.inject({ method: 'PUT', url: '/v1/auth/me' }),
    ]) {
      assert.equal(res.statusCode, 404);
      assert.deepEqual(body(res), { error: 'Not found', code: 'not_found' });
    }
  });

  test('409 for a duplicate', async () => {
    const user = await signUp(t.app);
    const res = await t.app.inject({ method: 'POST', url: '/v1/users', payload: { email: user.email, password: 'whatever1', name: 'X' } });
    assert.equal(res.statusCode, 409);
    assert.deepEqual(body(res), { error: 'Email already registered', code: 'conflict' });
  });

  test('413 for a body over the limit', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/users', payload: { email: 'a@example.com', password: 'x'.repeat(4000), name: 'Big' } });
    assert.equal(res.statusCode, 413);
    assert.deepEqual(body(res), { error: 'Payload too large', code: 'payload_too_large' });
  });

  test('415 for a body that is not JSON', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'content-type': type }, payload: 'email=a' });
      assert.equal(res.statusCode, 415, type);
      assert.deepEqual(body(res), { error: 'Unsupported media type', code: 'unsupported_media_type' });
    }
  });

  test('422 with details naming each field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/users', payload: { email: 'nope', password: 'short' } });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(body(res), {
      error: 'Validation failed',
      code: 'validation_failed',
      details: [
        { field: 'name', message: 'is required' },
        { field: 'email', message: 'must match format "email"' },
        { field: 'password', message: 'must NOT have fewer than 8 characters' },
      ],
    });
  });

  test('422 for a bad path parameter', async () => {
    const user = await signUp(t.app);
    const param = await t.app.inject({ method: 'DELETE', url: '/v1/api-keys/abc', headers: { cookie: user.cookie } });
    assert.equal(param.statusCode, 422);
    assert.equal(body<{ details: { field: string }[] }>(param).details[0]!.field, 'id');
  });

  test('500 is masked and logged with the request id', async () => {
    const res = await t.app.inject({ url: '/test/boom', headers: { 'x-request-id': 'req-abc-123' } });
    assert.equal(res.statusCode, 500);
    assert.deepEqual(body(res), { error: 'Internal error', code: 'internal' });
    assert.equal(res.body.includes('hunter2'), false);
    assert.equal(res.body.includes('at '), false, 'no stack trace');
    assert.equal(res.headers['x-request-id'], 'req-abc-123');
    const entry = lines.map((l) => JSON.parse(l) as { reqId?: string; level: number; err?: { message: string } }).find((l) => l.reqId === 'req-abc-123');
    assert.ok(entry, 'the failure is logged under the request id');
    assert.equal(entry.level, 50);
    assert.equal(entry.err?.message, 'database password is hunter2');
  });

  test('every response is JSON and carries a request id', async () => {
    const res = await t.app.inject({ url: '/v1/nothing' });
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const unsafe = await t.app.inject({ url: '/v1/nothing', headers: { 'x-request-id': 'bad id\nwith newline' } });
    assert.notEqual(unsafe.headers['x-request-id'], 'bad id\nwith newline');
  });
});
