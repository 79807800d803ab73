// The dashboard's "View test data" switch: a session sends `x-muster-mode: test` and then sees,
// and writes, the test-mode records of its orgs; without the header a session stays live.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';

describe('session in test mode (View test data)', () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;
  before(async () => {
    t = await buildTestApp();
    owner = await signUp(t.app);
    other = await signUp(t.app);
  });
  after(() => t.close());

  const titles = async (headers: Record<string, string>) => {
    const res = await t.app.inject({ url: '/v1/tickets?limit=200', headers });
    assert.equal(res.statusCode, 200, res.body);
    return body<{ tickets: { title: string; livemode: boolean }[] }>(res).tickets.map((i) => `${i.title}:${i.livemode}`);
  };

  test('a test key record appears only with the header; a live one only without', async () => {
    const key = await createKey(t.app, owner.cookie, 'test');
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { 'x-api-key': key.key }, payload: { title: 'from test key' } })).statusCode, 201);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: owner.cookie }, payload: { title: 'live one' } })).statusCode, 201);
    assert.deepEqual(await titles({ cookie: owner.cookie }), ['live one:true']);
    assert.deepEqual(await titles({ cookie: owner.cookie, 'x-muster-mode': 'test' }), ['from test key:false']);
    // Anything else than "test" is live.
    assert.deepEqual(await titles({ cookie: owner.cookie, 'x-muster-mode': 'TEST' }), ['live one:true']);
    const me = await t.app.inject({ url: '/v1/auth/me', headers: { cookie: owner.cookie, 'x-muster-mode': 'test' } });
    assert.equal(body(me).livemode, false);
  });

  test('writes with the header are test records; other users still see nothing of them', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: owner.cookie, 'x-muster-mode': 'test' }, payload: { title: 'made in test view' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.ok((await titles({ cookie: owner.cookie, 'x-muster-mode': 'test' })).includes('made in test view:false'));
    assert.ok(!(await titles({ cookie: owner.cookie })).includes('made in test view:false'));
    assert.deepEqual(await titles({ cookie: other.cookie, 'x-muster-mode': 'test' }), []);
  });

  test('the header does not turn an API key into another mode', async () => {
    const live = await createKey(t.app, owner.cookie, 'live');
    const me = await t.app.inject({ url: '/v1/auth/me', headers: { 'x-api-key': live.key, 'x-muster-mode': 'test' } });
    assert.equal(body(me).livemode, true);
  });
});
