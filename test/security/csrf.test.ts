import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createKey, signUp, type TestUser } from '../factories.js';
import { body, buildTestApp, testDialect, type TestApp, type Headers } from '../helpers.js';

const REFUSED = { error: 'Cross-site request refused', code: 'forbidden' };
const OWN_ORIGIN = 'http://muster.test'; // PUBLIC_URL of the test apps

describe(`CSRF: cookie writes only from Muster's own origin (${testDialect})`, () => {
  let t: TestApp;
  let alice: TestUser;
  let aliceKey: Headers;
  before(async () => {
    t = await buildTestApp();
    alice = await signUp(t.app, { name: 'Alice' });
    aliceKey = { 'x-api-key': (await createKey(t.app, alice.cookie, 'live')).key };
    const et = await t.app.inject({ method: 'POST', url: '/v1/event-types', headers: aliceKey, payload: { name: 'Call', slug: 'call', duration_minutes: 30 } });
    assert.equal(et.statusCode, 201, et.body);
  });
  after(() => t.close());

  const ticket = (headers: Headers, title: string) => t.app.inject({ method: 'POST', url: '/v1/tickets', headers, payload: { title } });
  const count = async (title: string) =>
    Number((await t.ctx.db.selectFrom('incidents').select((eb) => eb.fn.countAll().as('n')).where('title', '=', title).executeTakeFirstOrThrow()).n);
  function assertRefused(res: LightMyRequestResponse) {
    assert.equal(res.statusCode, 403, res.body);
    assert.deepEqual(body(res), REFUSED);
  }

  test('a cross-site or same-site cookie write is refused and has no effect', async () => {
    assertRefused(await ticket({ cookie: alice.cookie, 'sec-fetch-site': 'cross-site' }, 'Forged'));
    assertRefused(await ticket({ cookie: alice.cookie, 'sec-fetch-site': 'same-site' }, 'Forged'));
    // Older browsers without Sec-Fetch-Site: Origin decides.
    assertRefused(await ticket({ cookie: alice.cookie, origin: 'https://evil.example' }, 'Forged'));
    assertRefused(await ticket({ cookie: alice.cookie, origin: 'null' }, 'Forged'));
    // Sec-Fetch-Site wins over an Origin that looks right.
    assertRefused(await ticket({ cookie: alice.cookie, 'sec-fetch-site': 'cross-site', origin: OWN_ORIGIN }, 'Forged'));
    assertRefused(await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: alice.cookie, 'sec-fetch-site': 'cross-site' }, payload: { name: 'Mallory' } }));
    assertRefused(await t.app.inject({ method: 'DELETE', url: '/v1/bookings/bk_x', headers: { cookie: alice.cookie, origin: 'https://evil.example' } }));
    assert.equal(await count('Forged'), 0);
    const me = await t.app.inject({ url: '/v1/auth/me', headers: { cookie: alice.cookie } });
    assert.equal(body(me).name, 'Alice');
  });

  test('a same-origin cookie write is accepted', async () => {
    assert.equal((await ticket({ cookie: alice.cookie, 'sec-fetch-site': 'same-origin' }, 'Own page')).statusCode, 201);
    assert.equal((await ticket({ cookie: alice.cookie, 'sec-fetch-site': 'none' }, 'Own page')).statusCode, 201);
    assert.equal((await ticket({ cookie: alice.cookie, origin: OWN_ORIGIN }, 'Own page')).statusCode, 201);
    // Neither header: not a browser a third-party page can drive.
    assert.equal((await ticket({ cookie: alice.cookie }, 'Own page')).statusCode, 201);
    assert.equal(await count('Own page'), 4);
  });

  test('cookie reads are not checked', async () => {
    const res = await t.app.inject({ url: '/v1/auth/me', headers: { cookie: alice.cookie, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } });
    assert.equal(res.statusCode, 200);
  });

  test('key-authenticated requests are unaffected, even with a cookie beside the key', async () => {
    const hostile = { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' };
    assert.equal((await ticket({ ...aliceKey, ...hostile }, 'By key')).statusCode, 201);
    assert.equal((await ticket({ ...aliceKey, cookie: alice.cookie, ...hostile }, 'By key')).statusCode, 201);
    assert.equal(await count('By key'), 2);
  });

  test('public booking posts are meant to come from anywhere', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/book/${alice.slug}/call`,
      headers: { cookie: alice.cookie, 'sec-fetch-site': 'cross-site', origin: 'https://customer.example' },
      payload: { attendee_name: 'Guest', attendee_email: 'guest@example.com', start_time: '2026-01-07T10:00:00.000Z' },
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  test('login from another site is refused (login CSRF) and sets no cookie; a forced logout too', async () => {
    const payload = { email: alice.email, password: alice.password };
    const forged = await t.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { origin: 'https://evil.example' }, payload });
    assertRefused(forged);
    assert.equal(forged.headers['set-cookie'], undefined);
    assertRefused(await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', headers: { 'sec-fetch-site': 'cross-site' }, payload: { email: alice.email, code: '123456' } }));
    const own = await t.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'sec-fetch-site': 'same-origin' }, payload });
    assert.equal(own.statusCode, 200);

    assertRefused(await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: { cookie: alice.cookie, 'sec-fetch-site': 'cross-site' } }));
    assert.equal((await t.app.inject({ url: '/v1/auth/me', headers: { cookie: alice.cookie } })).statusCode, 200);
  });
});

describe(`request bodies (${testDialect})`, () => {
  let t: TestApp;
  let key: Headers;
  before(async () => {
    t = await buildTestApp({ BODY_LIMIT_BYTES: '4096' });
    const u = await signUp(t.app);
    key = { 'x-api-key': (await createKey(t.app, u.cookie, 'live')).key };
  });
  after(() => t.close());

  const UNSUPPORTED = { error: 'Unsupported media type', code: 'unsupported_media_type' };

  test('JSON routes refuse form, multipart and text bodies with 415 (a form cannot post JSON cross-site)', async () => {
    const bodies: [string, string][] = [
      ['application/x-www-form-urlencoded', 'title=Forged'],
      ['multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="title"\r\n\r\nForged\r\n--xyz--\r\n'],
      ['text/plain', '{"title":"Forged"}'],
      ['text/plain;charset=UTF-8', '{"title":"Forged"}'],
    ];
    for (const [type, payload] of bodies) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { ...key, 'content-type': type }, payload });
      assert.equal(res.statusCode, 415, `${type}: ${res.body}`);
      assert.deepEqual(body(res), UNSUPPORTED);
    }
    const n = await t.ctx.db.selectFrom('incidents').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 0);
    // Public JSON routes too.
    const login = await t.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=a%40b.c&password=x' });
    assert.equal(login.statusCode, 415);
  });

  test('a body over BODY_LIMIT_BYTES is 413 with the JSON error body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { ...key, 'content-type': 'application/json' }, payload: JSON.stringify({ title: 'Big', description: 'x'.repeat(5000) }) });
    assert.equal(res.statusCode, 413);
    assert.deepEqual(body(res), { error: 'Payload too large', code: 'payload_too_large' });
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: key, payload: { title: 'Small', description: 'x'.repeat(3000) } })).statusCode, 201);
  });
});
