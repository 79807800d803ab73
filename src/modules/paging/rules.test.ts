import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';

describe('personal notification rules', () => {
  let t: TestApp;
  let ann: TestUser;
  let ben: TestUser;
  before(async () => {
    t = await buildTestApp();
    ann = await signUp(t.app, { name: 'Ann' });
    ben = await signUp(t.app, { name: 'Ben' });
  });
  after(() => t.close());

  const url = '/v1/auth/me/notification-rules';
  const get = (u: TestUser) => t.app.inject({ method: 'GET', url, headers: { cookie: u.cookie } });
  const put = (u: TestUser, payload: object) => t.app.inject({ method: 'PUT', url, headers: { cookie: u.cookie }, payload });

  test('the defaults until set: high = push and email at once, SMS at 2 min, voice at 5; low = push and email', async () => {
    const res = await get(ann);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      high: [
        { channel: 'push', delay_minutes: 0 },
        { channel: 'email', delay_minutes: 0 },
        { channel: 'sms', delay_minutes: 2 },
        { channel: 'voice', delay_minutes: 5 },
      ],
      low: [
        { channel: 'push', delay_minutes: 0 },
        { channel: 'email', delay_minutes: 0 },
      ],
    });
    assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 401);
  });

  test('PUT replaces both lists, for the caller only; an API key of either mode reads the same rules', async () => {
    const mine = { high: [{ channel: 'voice', delay_minutes: 0 }, { channel: 'sms', delay_minutes: 120 }], low: [] };
    const res = await put(ann, mine);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), mine);
    assert.deepEqual((await get(ann)).json(), mine);
    assert.equal((await get(ben)).json<{ high: unknown[] }>().high.length, 4, "another person's rules are untouched");
    const testKey = (await createKey(t.app, ann.cookie, 'test')).key;
    assert.deepEqual((await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': testKey } })).json(), mine);
    const again = { high: [{ channel: 'push', delay_minutes: 1 }], low: [{ channel: 'email', delay_minutes: 3 }] };
    assert.deepEqual((await put(ann, again)).json(), again);
    assert.deepEqual((await get(ann)).json(), again);
  });

  test('422 with the field: an unknown channel, a delay out of 0..120, more than 10 rules per urgency, a missing list', async () => {
    const rule = { channel: 'push', delay_minutes: 0 };
    const cases: [object, string][] = [
      [{ high: [{ channel: 'pager', delay_minutes: 0 }], low: [] }, 'high.0.channel'],
      [{ high: [], low: [{ channel: 'sms', delay_minutes: 121 }] }, 'low.0.delay_minutes'],
      [{ high: [{ channel: 'sms', delay_minutes: -1 }], low: [] }, 'high.0.delay_minutes'],
      [{ high: Array.from({ length: 11 }, () => rule), low: [] }, 'high'],
      [{ high: [], low: Array.from({ length: 11 }, () => rule) }, 'low'],
      [{ high: [] }, 'low'],
    ];
    for (const [payload, field] of cases) {
      const res = await put(ben, payload);
      assert.equal(res.statusCode, 422, `${field}: ${res.body}`);
      assert.ok(res.json<{ details: { field: string }[] }>().details.some((d) => d.field === field), `${field} in ${res.body}`);
    }
    assert.equal((await put(ben, { high: Array.from({ length: 10 }, () => rule), low: [] })).statusCode, 200, 'ten is allowed');
  });
});
