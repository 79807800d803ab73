import assert from 'node:assert/strict';
import { testContexts } from './helpers.js';
let seq = 0;
export function uniqueEmail(prefix = 'user') {
    seq += 1;
    return `${prefix}-${process.pid}-${seq}@example.com`;
}
/** The `muster_session=value` pair from a response's Set-Cookie header. */
export function sessionCookie(setCookie) {
    const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
    const found = all.find((c) => c.startsWith('muster_session='));
    assert.ok(found, 'response sets muster_session');
    return found.split(';')[0];
}
/**
 * Registers a user through the API. Their address is then proven with the emailed code, as most
 * users do at once, unless `verified: false` keeps the account unproven (tests of what waits for proof).
 */
export async function register(app, fields = {}) {
    const { verified = true, ...rest } = fields;
    const input = { email: uniqueEmail(), password: 'correct horse battery', name: 'Test User', ...rest };
    const res = await app.inject({ method: 'POST', url: '/v1/users', payload: input });
    assert.equal(res.statusCode, 201, res.body);
    const user = res.json();
    if (verified && testContexts.has(app))
        await verifyEmail(app, user.email);
    return { ...user, password: input.password };
}
export async function login(app, email, password) {
    const res = await app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password } });
    assert.equal(res.statusCode, 200, res.body);
    return sessionCookie(res.headers['set-cookie']);
}
/** Registers a user through the API and logs them in. */
export async function signUp(app, fields = {}) {
    const user = await register(app, fields);
    return { ...user, cookie: await login(app, user.email, user.password) };
}
export async function createKey(app, cookie, mode, name = `${mode} key`) {
    const res = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: { cookie }, payload: { name, mode } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
}
/** Changes a user's plan as an instance admin (the first user of the instance, or MUSTER_ADMIN_EMAILS). */
export async function setPlan(app, adminCookie, userId, plan) {
    const res = await app.inject({ method: 'PATCH', url: `/v1/users/${userId}`, headers: { cookie: adminCookie }, payload: { plan } });
    assert.equal(res.statusCode, 200, res.body);
}
/** The six-digit code in the newest email of this topic to this address (the outbox row is the record). */
export async function emailedCode(app, email, topic) {
    const ctx = testContexts.get(app);
    assert.ok(ctx, 'an app made by buildTestApp');
    const row = await ctx.db
        .selectFrom('outbox')
        .select('payload')
        .where('recipient', '=', email)
        .where('topic', '=', topic)
        .orderBy('id', 'desc')
        .executeTakeFirst();
    assert.ok(row, `an email ${topic} to ${email}`);
    const code = /code is (\d{6})/.exec(JSON.parse(row.payload).text)?.[1];
    assert.ok(code, 'the email carries a code');
    return code;
}
/** Proves an address the way its owner does: the code of the confirmation email, through the API. */
export async function verifyEmail(app, email) {
    const code = await emailedCode(app, email, 'auth.verify_email');
    const res = await app.inject({ method: 'POST', url: '/v1/auth/verify-email', payload: { email, code } });
    assert.equal(res.statusCode, 200, res.body);
}
/**
 * Removes the confirmation emails that signing users up queued, for delivery tests that count
 * what reaches their peers: those emails belong to the setup, not to what the test exercises.
 */
export async function dropConfirmationEmails(app) {
    const ctx = testContexts.get(app);
    assert.ok(ctx, 'an app made by buildTestApp');
    await ctx.db.deleteFrom('outbox').where('topic', '=', 'auth.verify_email').execute();
}
//# sourceMappingURL=factories.js.map