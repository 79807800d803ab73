import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HOUR } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { emailedCode, login, register, signUp, type TestUser } from '../../../test/factories.js';

type Me = { id: number; email_verified: boolean; admin: boolean };

describe('email verification (issue #14 item 5)', () => {
  let t: TestApp;
  let root: TestUser;
  before(async () => {
    t = await buildTestApp({ MUSTER_ADMIN_EMAILS: 'Boss@Example.com' });
    // The first user is admin by being first, proven or not.
    root = { ...(await register(t.app, { name: 'Root', verified: false })), cookie: '' };
    root.cookie = await login(t.app, root.email, root.password);
  });
  after(() => t.close());

  const me = async (cookie: string) => body<Me>(await t.app.inject({ url: '/v1/auth/me', headers: { cookie } }));
  const verify = (email: string, code: string) => t.app.inject({ method: 'POST', url: '/v1/auth/verify-email', payload: { email, code } });
  const resend = (email: string) => t.app.inject({ method: 'POST', url: '/v1/auth/verify-email/resend', payload: { email } });
  const confirmations = async (email: string) =>
    (await t.ctx.db.selectFrom('outbox').select('id').where('recipient', '=', email).where('topic', '=', 'auth.verify_email').execute()).length;

  test('the first user is admin without a proven address', async () => {
    const m = await me(root.cookie);
    assert.equal(m.email_verified, false);
    assert.equal(m.admin, true);
  });

  test('registration emails a code and a link; the code proves the address once', async () => {
    const u = await register(t.app, { verified: false });
    const cookie = await login(t.app, u.email, u.password);
    assert.equal((await me(cookie)).email_verified, false);
    const code = await emailedCode(t.app, u.email, 'auth.verify_email');
    const row = await t.ctx.db.selectFrom('outbox').select('payload').where('recipient', '=', u.email).where('topic', '=', 'auth.verify_email').executeTakeFirstOrThrow();
    assert.ok(row.payload.includes(`http://muster.test/verify-email?email=${encodeURIComponent(u.email)}&code=${code}`), 'the link carries the code');
    const wrong = code === '000000' ? '111111' : '000000';
    assert.equal((await verify(u.email, wrong)).statusCode, 401);
    assert.equal((await me(cookie)).email_verified, false);
    const ok = await verify(u.email.toUpperCase(), code);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(body(ok), { ok: true });
    assert.equal((await me(cookie)).email_verified, true);
    assert.equal((await verify(u.email, code)).statusCode, 401, 'single use');
  });

  test('the code lives a day', async () => {
    const u = await register(t.app, { verified: false });
    const code = await emailedCode(t.app, u.email, 'auth.verify_email');
    t.clock.advance(24 * HOUR);
    assert.equal((await verify(u.email, code)).statusCode, 401);
  });

  test('resend always answers ok and emails only a registered, unproven address', async () => {
    const u = await register(t.app, { verified: false });
    const proven = await register(t.app);
    const first = await emailedCode(t.app, u.email, 'auth.verify_email');
    const answers = await Promise.all([resend(u.email), resend(proven.email), resend('nobody-verify@example.com')]);
    for (const a of answers) assert.deepEqual([a.statusCode, body(a)], [200, { ok: true }]);
    assert.equal(await confirmations(u.email), 2);
    assert.equal(await confirmations(proven.email), 1, 'a proven address gets no new code');
    assert.equal(await confirmations('nobody-verify@example.com'), 0);
    const second = await emailedCode(t.app, u.email, 'auth.verify_email');
    if (first !== second) assert.equal((await verify(u.email, first)).statusCode, 401, 'the newer code retired the older');
    assert.equal((await verify(u.email, second)).statusCode, 200);
  });

  test('MUSTER_ADMIN_EMAILS grants admin only once the address is proven, in any case', async () => {
    const boss = await register(t.app, { email: 'BOSS@example.com', verified: false });
    const cookie = await login(t.app, boss.email, boss.password);
    assert.equal((await me(cookie)).admin, false, 'registering the address proves nothing');
    assert.equal((await t.app.inject({ url: '/v1/users', headers: { cookie } })).statusCode, 403);
    assert.equal((await verify('boss@example.com', await emailedCode(t.app, 'boss@example.com', 'auth.verify_email'))).statusCode, 200);
    assert.equal((await me(cookie)).admin, true);
    assert.equal((await t.app.inject({ url: '/v1/users', headers: { cookie } })).statusCode, 200);
  });

  test('a magic code proves the address', async () => {
    const u = await register(t.app, { verified: false });
    await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: u.email } });
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', payload: { email: u.email, code: await emailedCode(t.app, u.email, 'auth.magic_code') } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(body<{ user: Me }>(res).user.email_verified, true);
  });

  test('an admin marks an address verified (or not) with PATCH /v1/users/:id; the list shows it', async () => {
    const u = await register(t.app, { verified: false });
    const patch = (cookie: string, payload: object) => t.app.inject({ method: 'PATCH', url: `/v1/users/${u.id}`, headers: { cookie }, payload });
    const set = await patch(root.cookie, { email_verified: true });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(body<Me>(set).email_verified, true);
    const list = body<{ users: (Me & { email: string })[] }>(await t.app.inject({ url: '/v1/users?limit=200', headers: { cookie: root.cookie } }));
    assert.equal(list.users.find((x) => x.id === u.id)?.email_verified, true);
    assert.equal(body<Me>(await patch(root.cookie, { email_verified: false })).email_verified, false);
    const both = body<Me & { plan: string }>(await patch(root.cookie, { plan: 'starter', email_verified: true }));
    assert.deepEqual([both.plan, both.email_verified], ['starter', true]);
    assert.equal((await patch(root.cookie, {})).statusCode, 422);
    assert.equal((await patch(root.cookie, { email_verified: 'yes' })).statusCode, 422);
    const other = await signUp(t.app);
    assert.equal((await patch(other.cookie, { email_verified: true })).statusCode, 403);
  });

  test('an unverified account keeps its own org, keys, incidents, signals and event types', async () => {
    const u = await register(t.app, { verified: false });
    const cookie = await login(t.app, u.email, u.password);
    const key = await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers: { cookie }, payload: { name: 'k', mode: 'live' } });
    assert.equal(key.statusCode, 201);
    const headers = { 'x-api-key': body<{ key: string }>(key).key };
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/tickets', headers, payload: { title: 'Leak' } })).statusCode, 201);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { type: 'note', note: 'hi' } })).statusCode, 201);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/event-types', headers, payload: { name: 'Call', duration_minutes: 30 } })).statusCode, 201);
    assert.equal((await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers, payload: { name: 'Renamed' } })).statusCode, 200);
  });

  test('a malformed code is 422, an unknown email 401', async () => {
    assert.equal((await verify('nobody-verify@example.com', '123456')).statusCode, 401);
    const res = await verify('nobody-verify@example.com', '12a456');
    assert.equal(res.statusCode, 422);
    assert.equal(body<{ details: { field: string }[] }>(res).details[0]!.field, 'code');
  });
});
