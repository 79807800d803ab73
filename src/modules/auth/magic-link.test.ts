import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { MINUTE } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { register } from '../../../test/factories.js';

describe('magic link with a six-digit code', () => {
  let t: TestApp;
  let user: Awaited<ReturnType<typeof register>>;
  before(async () => {
    t = await buildTestApp();
  });
  beforeEach(async () => {
    user = await register(t.app);
  });
  after(() => t.close());

  const request = (email: string) => t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email } });
  const verify = (email: string, code: string) =>
    t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', payload: { email, code } });

  /** The code in the newest email queued to this address (the outbox row is the record). */
  async function lastCode(email: string): Promise<string> {
    const row = await t.ctx.db
      .selectFrom('outbox')
      .select(['payload', 'kind', 'topic', 'status'])
      .where('recipient', '=', email)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(row.kind, 'email');
    assert.equal(row.topic, 'auth.magic_code');
    assert.equal(row.status, 'pending');
    const { text } = JSON.parse(row.payload) as { text: string };
    const code = /code is (\d{6})/.exec(text)?.[1];
    assert.ok(code);
    assert.ok(text.includes(`http://muster.test/login/magic?email=${encodeURIComponent(email)}&code=${code}`), 'link built from PUBLIC_URL');
    return code;
  }

  const emailsTo = async (email: string) =>
    (await t.ctx.db.selectFrom('outbox').select('id').where('recipient', '=', email).where('topic', '=', 'auth.magic_code').execute()).length;

  test('a known and an unknown email get the same answer; only the known one gets an email', async () => {
    const known = await request(user.email);
    const unknown = await request('stranger@example.com');
    assert.equal(known.statusCode, 200);
    assert.equal(unknown.statusCode, 200);
    assert.equal(known.body, unknown.body);
    assert.deepEqual(body(known), { ok: true });
    assert.equal(await emailsTo(user.email), 1);
    assert.equal(await emailsTo('stranger@example.com'), 0);
  });

  test('the code logs in once and sets a session cookie', async () => {
    await request(user.email);
    const code = await lastCode(user.email);
    const ok = await verify(user.email, code);
    assert.equal(ok.statusCode, 200);
    assert.equal(body<{ user: { id: number } }>(ok).user.id, user.id);
    assert.match(String(ok.headers['set-cookie']), /^muster_session=/);
    const me = await t.app.inject({ url: '/v1/auth/me', headers: { cookie: String(ok.headers['set-cookie']).split(';')[0]! } });
    assert.equal(me.statusCode, 200);
    assert.equal((await verify(user.email, code)).statusCode, 401, 'single use');
  });

  test('the code is stored hashed', async () => {
    await request(user.email);
    const code = await lastCode(user.email);
    const row = await t.ctx.db.selectFrom('magic_codes').select('code_hash').where('email', '=', user.email).where('purpose', '=', 'magic').executeTakeFirstOrThrow();
    assert.match(row.code_hash, /^[0-9a-f]{64}$/);
    assert.notEqual(row.code_hash, code);
  });

  test('wrong codes are counted: after five the code is burned, even the right one', async () => {
    await request(user.email);
    const code = await lastCode(user.email);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) assert.equal((await verify(user.email, wrong)).statusCode, 401);
    const attempts = await t.ctx.db.selectFrom('magic_codes').select('attempts').where('email', '=', user.email).where('purpose', '=', 'magic').executeTakeFirstOrThrow();
    assert.equal(attempts.attempts, 5);
    assert.equal((await verify(user.email, code)).statusCode, 401);
  });

  test('four wrong tries still leave the right code usable', async () => {
    await request(user.email);
    const code = await lastCode(user.email);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) await verify(user.email, wrong);
    assert.equal((await verify(user.email, code)).statusCode, 200);
  });

  test('a code expires after 10 minutes', async () => {
    await request(user.email);
    const code = await lastCode(user.email);
    t.clock.advance(10 * MINUTE);
    assert.equal((await verify(user.email, code)).statusCode, 401);
  });

  test('a code is accepted just before 10 minutes', async () => {
    await request(user.email);
    const code = await lastCode(user.email);
    t.clock.advance(10 * MINUTE - 1000);
    assert.equal((await verify(user.email, code)).statusCode, 200);
  });

  test('a new code retires the previous one', async () => {
    await request(user.email);
    const old = await lastCode(user.email);
    t.clock.advance(1000);
    await request(user.email);
    const fresh = await lastCode(user.email);
    if (old !== fresh) assert.equal((await verify(user.email, old)).statusCode, 401);
    assert.equal((await verify(user.email, fresh)).statusCode, 200);
  });

  test('at most five codes are emailed to one address per hour', async () => {
    for (let i = 0; i < 7; i++) assert.equal((await request(user.email)).statusCode, 200);
    assert.equal(await emailsTo(user.email), 5);
    t.clock.advance(61 * MINUTE);
    await request(user.email);
    assert.equal(await emailsTo(user.email), 6);
  });

  test('a code for an unknown email and a malformed code are refused', async () => {
    assert.equal((await verify('stranger@example.com', '123456')).statusCode, 401);
    const res = await verify(user.email, '12345');
    assert.equal(res.statusCode, 422);
    assert.equal(body<{ details: { field: string }[] }>(res).details[0]!.field, 'code');
  });
});
