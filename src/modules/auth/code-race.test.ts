import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { emailedCode, register } from '../../../test/factories.js';

/**
 * Issue #14 item 3: the attempt counter was read, compared and then bumped in separate steps, so
 * 60 concurrent tries on PostgreSQL were all evaluated (attempts reached 59) and the right code
 * among them was accepted. Now each try takes an attempt in one conditional UPDATE first.
 */
describe('the five tries of an emailed code under concurrency', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const attemptsOf = async (email: string, purpose: 'magic' | 'reset') =>
    (await t.ctx.db.selectFrom('magic_codes').select('attempts').where('email', '=', email).where('purpose', '=', purpose).orderBy('id', 'desc').executeTakeFirstOrThrow())
      .attempts;

  for (const trial of [1, 2, 3]) {
    test(`60 concurrent wrong codes and the right one: at most five are evaluated (trial ${trial})`, async () => {
      const user = await register(t.app);
      await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: user.email } });
      const code = await emailedCode(t.app, user.email, 'auth.magic_code');
      const wrong = code === '000000' ? '111111' : '000000';
      const tries = Array.from({ length: 61 }, (_, i) => (i === 60 ? code : wrong));
      const answers = await Promise.all(
        tries.map((c) => t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', payload: { email: user.email, code: c } })),
      );
      assert.equal(await attemptsOf(user.email, 'magic'), 5, 'exactly five tries were counted, never more');
      const accepted = answers.filter((r) => r.statusCode === 200).length;
      assert.ok(accepted <= 1);
      assert.equal(answers.filter((r) => r.statusCode === 401).length, 61 - accepted);
      // Whatever the race gave, the code is now spent or burned.
      const again = await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', payload: { email: user.email, code } });
      assert.equal(again.statusCode, 401);
    });
  }

  test('reset codes follow the same rule: 60 concurrent wrong tries count five', async () => {
    const user = await register(t.app);
    await t.app.inject({ method: 'POST', url: '/v1/auth/password-reset', payload: { email: user.email } });
    const code = await emailedCode(t.app, user.email, 'auth.password_reset');
    const wrong = code === '000000' ? '111111' : '000000';
    await Promise.all(
      Array.from({ length: 60 }, () =>
        t.app.inject({ method: 'POST', url: '/v1/auth/password-reset/verify', payload: { email: user.email, code: wrong, new_password: 'a new password' } }),
      ),
    );
    assert.equal(await attemptsOf(user.email, 'reset'), 5);
    const late = await t.app.inject({ method: 'POST', url: '/v1/auth/password-reset/verify', payload: { email: user.email, code, new_password: 'a new password' } });
    assert.equal(late.statusCode, 401, 'the right code after five tries is refused');
  });
});
