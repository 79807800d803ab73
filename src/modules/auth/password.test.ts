import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, emailedCode, login, register, signUp, type TestUser } from '../../../test/factories.js';

describe('changing and resetting a password (issue #14 item 6)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const me = (headers: Headers) => t.app.inject({ url: '/v1/auth/me', headers });
  const change = (headers: Headers, current_password: string, new_password: string) =>
    t.app.inject({ method: 'POST', url: '/v1/auth/password', headers, payload: { current_password, new_password } });
  const sessionsOf = async (userId: number) =>
    Number((await t.ctx.db.selectFrom('sessions').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);

  test('a change with the session keeps that session, ends the others, keeps keys; the new password logs in', async () => {
    const u = await signUp(t.app);
    const other = await login(t.app, u.email, u.password);
    const { key } = await createKey(t.app, u.cookie, 'live');
    const res = await change({ cookie: u.cookie }, u.password, 'a brand new secret');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res), { ok: true });
    assert.equal((await me({ cookie: u.cookie })).statusCode, 200, 'the session that changed it stays');
    assert.equal((await me({ cookie: other })).statusCode, 401, 'another session ended');
    assert.equal((await me({ 'x-api-key': key })).statusCode, 200, 'keys stay');
    assert.equal(await sessionsOf(u.id), 1);
    const old = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: u.email, password: u.password } });
    assert.equal(old.statusCode, 401);
    await login(t.app, u.email, 'a brand new secret');
  });

  test('a change with a key ends every session', async () => {
    const u = await signUp(t.app);
    const { key } = await createKey(t.app, u.cookie, 'test');
    assert.equal((await change({ 'x-api-key': key }, u.password, 'another new secret')).statusCode, 200);
    assert.equal((await me({ cookie: u.cookie })).statusCode, 401);
    assert.equal(await sessionsOf(u.id), 0);
  });

  test('a wrong current password is 401 and changes nothing; a short new one is 422; no credential is 401', async () => {
    const u = await signUp(t.app);
    const other = await login(t.app, u.email, u.password);
    const wrong = await change({ cookie: u.cookie }, 'not my password', 'whatever new one');
    assert.equal(wrong.statusCode, 401);
    assert.equal((await me({ cookie: other })).statusCode, 200, 'a refused change ends nothing');
    await login(t.app, u.email, u.password);
    const short = await change({ cookie: u.cookie }, u.password, 'short');
    assert.equal(short.statusCode, 422);
    assert.equal(body<{ details: { field: string }[] }>(short).details[0]!.field, 'new_password');
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/auth/password', payload: { current_password: 'x', new_password: 'yyyyyyyy' } })).statusCode, 401);
  });

  test('PATCH /v1/auth/me {password} is a 422 naming the endpoint, not silently ignored', async () => {
    const u = await signUp(t.app);
    const res = await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: u.cookie }, payload: { password: 'a new password', name: 'X' } });
    assert.equal(res.statusCode, 422);
    const d = body<{ details: { field: string; message: string }[] }>(res).details;
    assert.equal(d[0]!.field, 'password');
    assert.match(d[0]!.message, /POST \/v1\/auth\/password/);
    await login(t.app, u.email, u.password);
  });

  describe('reset by emailed code', () => {
    let u: TestUser;
    const reset = (email: string, code: string, new_password = 'reset password 1') =>
      t.app.inject({ method: 'POST', url: '/v1/auth/password-reset/verify', payload: { email, code, new_password } });
    const ask = (email: string) => t.app.inject({ method: 'POST', url: '/v1/auth/password-reset', payload: { email } });

    before(async () => {
      u = await signUp(t.app);
    });

    test('a known and an unknown email get the same 200; only the known one is emailed', async () => {
      const known = await ask(u.email);
      const unknown = await ask('nobody-reset@example.com');
      assert.equal(known.statusCode, 200);
      assert.equal(known.body, unknown.body);
      assert.deepEqual(body(known), { ok: true });
      const rows = await t.ctx.db.selectFrom('outbox').select('recipient').where('topic', '=', 'auth.password_reset').execute();
      assert.deepEqual(rows.map((r) => r.recipient), [u.email]);
    });

    test('the code sets the password, signs in, ends every earlier session and works once', async () => {
      await ask(u.email);
      const code = await emailedCode(t.app, u.email, 'auth.password_reset');
      const res = await reset(u.email.toUpperCase(), code);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(body<{ user: { id: number } }>(res).user.id, u.id);
      const fresh = String(res.headers['set-cookie']).split(';')[0]!;
      assert.match(fresh, /^muster_session=/);
      assert.equal((await me({ cookie: fresh })).statusCode, 200);
      assert.equal((await me({ cookie: u.cookie })).statusCode, 401, 'the earlier session ended');
      await login(t.app, u.email, 'reset password 1');
      assert.equal((await reset(u.email, code, 'reset password 2')).statusCode, 401, 'single use');
    });

    test('wrong, expired-by-newer and malformed codes; a sign-in code is no reset code', async () => {
      await ask(u.email);
      const code = await emailedCode(t.app, u.email, 'auth.password_reset');
      const wrong = code === '000000' ? '111111' : '000000';
      assert.equal((await reset(u.email, wrong)).statusCode, 401);
      assert.equal((await reset(u.email, '12345')).statusCode, 422);
      t.clock.advance(1000);
      await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: u.email } });
      const magic = await emailedCode(t.app, u.email, 'auth.magic_code');
      if (magic !== code) assert.equal((await reset(u.email, magic)).statusCode, 401, 'a magic code does not reset');
      assert.equal((await reset(u.email, code, 'reset password 3')).statusCode, 200, 'a magic code did not retire the reset code');
    });

    test('after five wrong tries even the right code is refused', async () => {
      await ask(u.email);
      const code = await emailedCode(t.app, u.email, 'auth.password_reset');
      const wrong = code === '000000' ? '111111' : '000000';
      for (let i = 0; i < 5; i++) assert.equal((await reset(u.email, wrong)).statusCode, 401);
      assert.equal((await reset(u.email, code)).statusCode, 401);
    });

    test('a reset proves the address', async () => {
      const fresh = await register(t.app, { verified: false });
      await ask(fresh.email);
      const code = await emailedCode(t.app, fresh.email, 'auth.password_reset');
      const res = await reset(fresh.email, code);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(body<{ user: { email_verified: boolean } }>(res).user.email_verified, true);
    });
  });
});
