import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MINUTE } from '../../lib/clock.js';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';

interface Me {
  phone: string | null;
  phone_verified: boolean;
}

describe('phone numbers are proven by an SMS code', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const me = async (u: TestUser) => (await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: { cookie: u.cookie } })).json<Me>();
  const setPhone = (u: TestUser, phone: string | null) => t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: u.cookie }, payload: { phone } });
  const verify = (u: TestUser, code: string) => t.app.inject({ method: 'POST', url: '/v1/auth/me/phone/verify', headers: { cookie: u.cookie }, payload: { code } });
  /** The codes texted to a person, oldest first, with the number each went to. */
  async function texts(u: TestUser) {
    const rows = await t.ctx.db.selectFrom('outbox').select(['recipient', 'payload', 'status', 'kind']).where('user_id', '=', u.id).where('topic', '=', 'auth.phone_code').orderBy('id').execute();
    return rows.map((r) => ({ to: r.recipient, kind: r.kind, status: r.status, code: /\b(\d{6})\b/.exec((JSON.parse(r.payload) as { body: string }).body)![1]! }));
  }
  const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  const codeField = (res: { statusCode: number; json<T>(): T }, field = 'code') => {
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json<{ details: { field: string }[] }>().details.map((d) => d.field), [field]);
  };

  test('a new number is stored unproven and texted a code; the right code proves it, a wrong one is 422', async () => {
    const ann = await signUp(t.app);
    const res = await setPhone(ann, '+14155550123');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<Me>().phone_verified, false);
    assert.deepEqual(await me(ann), { ...(await me(ann)), phone: '+14155550123', phone_verified: false });
    const [sms] = await texts(ann);
    assert.deepEqual([sms!.to, sms!.kind, sms!.status], ['+14155550123', 'phone', 'pending']);
    codeField(await verify(ann, wrong(sms!.code)));
    assert.equal((await me(ann)).phone_verified, false);
    const ok = await verify(ann, sms!.code);
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json(), { phone: '+14155550123', phone_verified: true });
    assert.equal((await me(ann)).phone_verified, true);
    // The same proven number again: nothing to prove, no new code.
    await setPhone(ann, '+14155550123');
    assert.equal((await me(ann)).phone_verified, true);
    assert.equal((await texts(ann)).length, 1);
    // Another number is unproven again; the old code does not prove it.
    await setPhone(ann, '+14155550999');
    assert.equal((await me(ann)).phone_verified, false);
    codeField(await verify(ann, sms!.code));
    const second = (await texts(ann))[1]!;
    assert.equal(second.to, '+14155550999');
    assert.equal((await verify(ann, second.code)).statusCode, 200);
    // null forgets the number.
    await setPhone(ann, null);
    assert.deepEqual([(await me(ann)).phone, (await me(ann)).phone_verified], [null, false]);
    codeField(await verify(ann, '123456'));
  });

  test('the limits of magic codes: 10 minutes, five attempts, single use, five codes an hour', async () => {
    const ben = await signUp(t.app);
    await setPhone(ben, '+14155550001');
    const first = (await texts(ben))[0]!;
    t.clock.advance(10 * MINUTE + 1);
    codeField(await verify(ben, first.code));
    await setPhone(ben, '+14155550002');
    const second = (await texts(ben))[1]!;
    for (let i = 0; i < 5; i++) codeField(await verify(ben, wrong(second.code)));
    codeField(await verify(ben, second.code));
    assert.equal((await me(ben)).phone_verified, false);
    for (const n of ['3', '4', '5']) assert.equal((await setPhone(ben, `+1415555000${n}`)).statusCode, 200);
    // The sixth code within the hour: refused, and the number stays as it was.
    codeField(await setPhone(ben, '+14155550006'), 'phone');
    assert.equal((await me(ben)).phone, '+14155550005');
    assert.equal((await texts(ben)).length, 5);
    const last = (await texts(ben))[4]!;
    assert.equal((await verify(ben, last.code)).statusCode, 200);
    t.clock.advance(60 * MINUTE);
    assert.equal((await setPhone(ben, '+14155550006')).statusCode, 200, 'a new hour');
  });
});
