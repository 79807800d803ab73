import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256 } from '../../lib/crypto.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { register, sessionCookie, signUp } from '../../../test/factories.js';

describe('login, logout and me', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const login = (email: string, password: string) =>
    t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
  const me = (headers: Record<string, string>) => t.app.inject({ url: '/v1/auth/me', headers });

  test('login answers {user} and sets an HttpOnly, SameSite=Lax, 14-day muster_session cookie', async () => {
    const user = await register(t.app, { name: 'Cookie Cat' });
    const res = await login(user.email.toUpperCase(), user.password);
    assert.equal(res.statusCode, 200);
    assert.equal(body<{ user: { id: number } }>(res).user.id, user.id);
    const raw = String(res.headers['set-cookie']);
    assert.match(raw, /^muster_session=[A-Za-z0-9_-]{43};/);
    assert.match(raw, /HttpOnly/);
    assert.match(raw, /SameSite=Lax/);
    assert.match(raw, /Max-Age=1209600/);
    assert.match(raw, /Path=\//);
    assert.doesNotMatch(raw, /Secure/, 'plain http PUBLIC_URL: no Secure attribute');
  });

  test('stores only the hash of the session id and issues a new id at every login', async () => {
    const user = await register(t.app);
    const first = sessionCookie((await login(user.email, user.password)).headers['set-cookie']);
    const second = sessionCookie((await login(user.email, user.password)).headers['set-cookie']);
    assert.notEqual(first, second);
    const ids = (await t.ctx.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).map((r) => r.id);
    const token = first.split('=')[1]!;
    assert.ok(ids.includes(sha256(token)));
    assert.ok(!ids.includes(token));
  });

  test('GET /v1/auth/me answers the user for a session cookie', async () => {
    const user = await signUp(t.app, { name: 'Me Myself', timezone: 'Asia/Tokyo' });
    const res = await me({ cookie: user.cookie });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(body(res), {
      id: user.id,
      email: user.email,
      name: 'Me Myself',
      slug: user.slug,
      plan: 'free',
      timezone: 'Asia/Tokyo',
      phone: null,
      phone_verified: false,
      admin: false,
      email_verified: true,
      livemode: true,
    });
  });

  test('wrong password and unknown email both answer the same 401', async () => {
    const user = await register(t.app);
    const wrong = await login(user.email, 'not the password');
    const unknown = await login('nobody@example.com', 'whatever it is');
    for (const res of [wrong, unknown]) {
      assert.equal(res.statusCode, 401);
      assert.deepEqual(body(res), { error: 'Unauthorized', code: 'unauthorized' });
      assert.equal(res.headers['set-cookie'], undefined);
    }
  });

  test('logout ends the session: the old cookie answers 401', async () => {
    const user = await signUp(t.app);
    const out = await t.app.inject({ method: 'POST', url: '/v1/auth/logout', headers: { cookie: user.cookie } });
    assert.equal(out.statusCode, 200);
    assert.deepEqual(body(out), { ok: true });
    assert.match(String(out.headers['set-cookie']), /muster_session=;.*Expires=Thu, 01 Jan 1970/);
    assert.equal((await me({ cookie: user.cookie })).statusCode, 401);
  });

  test('logout without a session still answers ok', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/logout' });
    assert.equal(res.statusCode, 200);
  });

  test('a session expires after 14 days', async () => {
    const user = await signUp(t.app);
    t.clock.advance(14 * 24 * 3600 * 1000 - 1000);
    assert.equal((await me({ cookie: user.cookie })).statusCode, 200);
    t.clock.advance(2000);
    assert.equal((await me({ cookie: user.cookie })).statusCode, 401);
  });

  test('no credential, a forged cookie or a bad header answers 401', async () => {
    assert.equal((await me({})).statusCode, 401);
    assert.equal((await me({ cookie: 'muster_session=forged' })).statusCode, 401);
    assert.equal((await me({ authorization: 'Basic abc' })).statusCode, 401);
  });

  test('the login body is validated', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: 'x@example.com' } });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(body(res).details, [{ field: 'password', message: 'is required' }]);
  });

  describe('PATCH /v1/auth/me', () => {
    test('edits name, time zone and an E.164 phone, and clears the phone with null', async () => {
      const user = await signUp(t.app);
      const patch = (payload: object) =>
        t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: user.cookie }, payload });
      const res = await patch({ name: 'New Name', timezone: 'Australia/Sydney', phone: '+14155550123' });
      assert.equal(res.statusCode, 200);
      assert.equal(body(res).name, 'New Name');
      assert.equal(body(res).timezone, 'Australia/Sydney');
      assert.equal(body(res).phone, '+14155550123');
      assert.equal(body(res).slug, user.slug, 'the slug stays: booking links must not break');
      assert.equal(body(await patch({ phone: null })).phone, null);
    });

    test('refuses an invalid phone, time zone or empty body with 422', async () => {
      const user = await signUp(t.app);
      for (const [payload, field] of [
        [{ phone: '0155 5501' }, 'phone'],
        [{ timezone: 'Nowhere/Land' }, 'timezone'],
        [{ name: '' }, 'name'],
        [{}, 'body'],
      ] as const) {
        const res = await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: user.cookie }, payload });
        assert.equal(res.statusCode, 422, JSON.stringify(payload));
        assert.equal(body<{ details: { field: string }[] }>(res).details[0]!.field, field);
      }
    });
  });
});

describe('cookies under an https PUBLIC_URL', () => {
  test('carry the Secure attribute', async () => {
    const t = await buildTestApp({ PUBLIC_URL: 'https://muster.example.com' });
    try {
      const user = await register(t.app);
      const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: user.email, password: user.password } });
      assert.match(String(res.headers['set-cookie']), /; Secure/);
    } finally {
      await t.close();
    }
  });
});
