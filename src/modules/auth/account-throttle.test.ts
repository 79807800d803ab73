import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { MINUTE } from '../../lib/clock.js';
import { body, buildTestApp, testDialect, type TestApp } from '../../../test/helpers.js';
import { emailedCode, register, signUp } from '../../../test/factories.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
// Three failures per account and door per 15 minutes; the per-address limit stays out of the way.
const LIMITS = { RATE_LIMIT_ACCOUNT: '3', RATE_LIMIT_ACCOUNT_WINDOW_MS: String(15 * MINUTE) };

function assertThrottled(res: LightMyRequestResponse) {
  assert.equal(res.statusCode, 429, res.body);
  assert.deepEqual(body(res), { error: 'Too many requests', code: 'rate_limited' });
  const retry = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 900, `Retry-After ${res.headers['retry-after']}`);
}

/** Issue #14 item 7: 6 addresses x 12 tries tested 60 passwords of one account in 2 s. */
describe(`per-account throttle of failed sign-ins (${testDialect})`, () => {
  let t: TestApp;
  let n = 0;
  before(async () => {
    t = await buildTestApp(LIMITS);
  });
  after(() => t.close());

  /** Each try from a new address: the per-address limit is not what stops them. */
  const from = () => `198.51.100.${(n++ % 250) + 1}`;
  const loginTry = (email: string, password: string) =>
    t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password }, remoteAddress: from() });
  const magicTry = (email: string, code: string) =>
    t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', payload: { email, code }, remoteAddress: from() });
  const fresh = () => t.clock.advance(15 * MINUTE);

  test('failures from many addresses are counted per account; then even the right password waits', async () => {
    fresh();
    const u = await register(t.app);
    for (let i = 0; i < 3; i++) assert.equal((await loginTry(u.email, `wrong ${i}`)).statusCode, 401);
    assertThrottled(await loginTry(u.email.toUpperCase(), 'wrong again'));
    assertThrottled(await loginTry(u.email, u.password));
    const other = await register(t.app);
    assert.equal((await loginTry(other.email, other.password)).statusCode, 200, 'another account is not affected');
    t.clock.advance(15 * MINUTE);
    assert.equal((await loginTry(u.email, u.password)).statusCode, 200, 'the next window lets the owner in');
  });

  test('while the password door is throttled, a magic code and a reset code still work', async () => {
    fresh();
    const u = await register(t.app);
    for (let i = 0; i < 4; i++) await loginTry(u.email, 'wrong');
    assertThrottled(await loginTry(u.email, u.password));
    await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: u.email } });
    assert.equal((await magicTry(u.email, await emailedCode(t.app, u.email, 'auth.magic_code'))).statusCode, 200);
    await t.app.inject({ method: 'POST', url: '/v1/auth/password-reset', payload: { email: u.email } });
    const code = await emailedCode(t.app, u.email, 'auth.password_reset');
    const reset = await t.app.inject({ method: 'POST', url: '/v1/auth/password-reset/verify', payload: { email: u.email, code, new_password: 'new password 1' } });
    assert.equal(reset.statusCode, 200, reset.body);
  });

  test('successes are not counted: many sign-ins, then three failures are still 401', async () => {
    fresh();
    const u = await register(t.app);
    for (let i = 0; i < 6; i++) assert.equal((await loginTry(u.email, u.password)).statusCode, 200);
    for (let i = 0; i < 3; i++) assert.equal((await loginTry(u.email, 'wrong')).statusCode, 401);
    assertThrottled(await loginTry(u.email, 'wrong'));
  });

  test('an unknown email is throttled alike, so a 429 tells nothing about registration', async () => {
    fresh();
    const email = `nobody-${process.pid}@example.com`;
    for (let i = 0; i < 3; i++) assert.equal((await loginTry(email, 'wrong')).statusCode, 401);
    assertThrottled(await loginTry(email, 'wrong'));
  });

  test('30 concurrent wrong passwords: exactly three are evaluated', async () => {
    fresh();
    const u = await register(t.app);
    const answers = await Promise.all(Array.from({ length: 30 }, () => loginTry(u.email, 'wrong')));
    assert.equal(answers.filter((r) => r.statusCode === 401).length, 3);
    assert.equal(answers.filter((r) => r.statusCode === 429).length, 27);
  });

  test('wrong codes (magic, reset, verify-email) share the code door; the password still works', async () => {
    fresh();
    const u = await register(t.app, { verified: false });
    assert.equal((await magicTry(u.email, '000000')).statusCode, 401);
    const reset = await t.app.inject({ method: 'POST', url: '/v1/auth/password-reset/verify', payload: { email: u.email, code: '000000', new_password: 'whatever new' } });
    assert.equal(reset.statusCode, 401);
    const verify = await t.app.inject({ method: 'POST', url: '/v1/auth/verify-email', payload: { email: u.email, code: '000000' } });
    assert.equal(verify.statusCode, 401);
    assertThrottled(await t.app.inject({ method: 'POST', url: '/v1/auth/verify-email', payload: { email: u.email, code: await emailedCode(t.app, u.email, 'auth.verify_email') } }));
    assert.equal((await loginTry(u.email, u.password)).statusCode, 200);
  });

  test('a wrong current password of POST /v1/auth/password counts on the password door', async () => {
    fresh();
    const u = await signUp(t.app);
    const change = (current_password: string) =>
      t.app.inject({ method: 'POST', url: '/v1/auth/password', headers: { cookie: u.cookie }, payload: { current_password, new_password: 'a new password' } });
    for (let i = 0; i < 3; i++) assert.equal((await change('wrong')).statusCode, 401);
    assertThrottled(await change(u.password));
  });
});

describe(`per-account throttle switched off with RATE_LIMIT_ACCOUNT=0 (${testDialect})`, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ RATE_LIMIT_ACCOUNT: '0' });
  });
  after(() => t.close());

  test('failures are never throttled', async () => {
    const u = await register(t.app);
    for (let i = 0; i < 15; i++) {
      assert.equal((await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: u.email, password: 'wrong' } })).statusCode, 401);
    }
  });
});

describe(`per-account throttle shared through Redis by two instances (${testDialect})`, () => {
  const prefix = `t${randomBytes(4).toString('hex')}:`;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    a = await buildTestApp({ ...LIMITS, REDIS_URL, REDIS_PREFIX: prefix });
    b = await buildTestApp({ ...LIMITS, REDIS_URL, REDIS_PREFIX: prefix });
    b.clock.set(a.clock.now());
  });
  after(async () => {
    await a.close();
    await b.close();
    const r = new Redis(REDIS_URL);
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    r.disconnect();
  });

  test('failures on one instance count on the other; a success gives its try back', async () => {
    const email = `shared-${process.pid}@example.com`;
    const user = await register(a.app, { email });
    const loginAt = (t: TestApp, password: string) => t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
    assert.equal((await loginAt(a, user.password)).statusCode, 200);
    assert.equal((await loginAt(a, 'wrong')).statusCode, 401);
    assert.equal((await loginAt(b, 'wrong')).statusCode, 401);
    assert.equal((await loginAt(a, 'wrong')).statusCode, 401);
    assertThrottled(await loginAt(b, 'wrong'));
    assertThrottled(await loginAt(a, user.password));
    const r = new Redis(REDIS_URL);
    const keys = await r.keys(`${prefix}acct:password:*`);
    r.disconnect();
    assert.equal(keys.length, 1, 'one counter, keyed by a hash of the email');
    assert.ok(!keys[0]!.includes(email));
  });
});
