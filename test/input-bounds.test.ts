import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../src/lib/json-depth.js';
import { fieldWithNul } from '../src/lib/nul.js';
import { body, buildTestApp, type TestApp } from './helpers.js';
import { signUp } from './factories.js';

// Issue 14, items 9 and 10: input that only a hostile client sends keeps the error contract.
describe('input bounds', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const nested = (levels: number, inner = '1') => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;

  test('a body nested 7,000 levels deep is a 422 on body, not a 500', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: `{"email":${nested(7000)}}` });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(body(res), { error: 'Validation failed', code: 'validation_failed', details: [{ field: 'body', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` }] });
  });

  test('nesting up to the limit is parsed as before; brackets inside strings do not count', async () => {
    const user = await signUp(t.app);
    const meta = JSON.parse(`{"deep":${nested(MAX_JSON_DEPTH - 2, '"x"')}, "text": "${'['.repeat(100)}"}`) as unknown;
    const res = await t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: user.cookie }, payload: { type: 'note', note: 'deep', meta } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(nestsDeeperThan(`{"a":"\\"[[[["}`, 1), false, 'an escaped quote does not end the string');
  });

  test('the NUL check walks any depth without recursion', () => {
    let deep: unknown = 'a\u0000b';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(fieldWithNul({ body: deep })?.startsWith('body.0.0'), true);
    assert.equal(fieldWithNul({ a: { b: ['x', 'y\u0000'] } }), 'a.b.1');
    assert.equal(fieldWithNul({ a: 1, 'k\u0000': 2 }), 'k\u0000');
  });

  test('an over-long path parameter is the contract 404, echoing nothing', async () => {
    const long = 'x'.repeat(5000);
    for (const url of [`/v1/orgs/${long}`, `/v1/u/${long}`, `/v1/bookings/manage/${long}`, `/v1/slots/${long}/${long}`]) {
      const res = await t.app.inject({ url });
      assert.equal(res.statusCode, 404, `${url.slice(0, 30)}: ${res.body.slice(0, 200)}`);
      assert.deepEqual(body(res), { error: 'Not found', code: 'not_found' });
      assert.ok(!res.body.includes('xxxx'));
    }
  });

  test('a path that does not decode is the contract 400, echoing nothing', async () => {
    const res = await t.app.inject({ url: '/v1/orgs/%E0%A4%A' });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(body(res), { error: 'Malformed URL', code: 'bad_request' });
  });

  test('any other framework refusal keeps its status with a body of ours, not its message', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'content-type': 'application/json', 'content-length': '5' }, payload: '{"email":"a@example.com"}' });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode} ${res.body}`);
    assert.ok(!/content-length|Content-Length/.test(res.body), res.body);
    assert.equal(typeof body(res).code, 'string');
  });
});
