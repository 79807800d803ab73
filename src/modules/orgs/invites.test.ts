import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY } from '../../lib/clock.js';
import { body, buildTestApp, testDialect, type TestApp, type Headers } from '../../../test/helpers.js';
import { login, register, setPlan, signUp, uniqueEmail, verifyEmail, type TestUser } from '../../../test/factories.js';

/**
 * Issue #14 item 5: registering an invited address used to join the org at once. An invite is now
 * accepted through its own emailed link, or when the address is proven.
 */
describe(`org invites wait for a proven address (${testDialect})`, () => {
  let t: TestApp;
  let owner: TestUser;
  let orgSlug: string;
  before(async () => {
    t = await buildTestApp();
    const root = await signUp(t.app, { name: 'Root' });
    owner = await signUp(t.app, { name: 'Owner' });
    await setPlan(t.app, root.cookie, owner.id, 'enterprise');
    const org = await t.app.inject({ method: 'POST', url: '/v1/orgs', headers: { cookie: owner.cookie }, payload: { name: 'Water Board' } });
    assert.equal(org.statusCode, 201, org.body);
    orgSlug = body<{ slug: string }>(org).slug;
  });
  after(() => t.close());

  const invite = (email: string, role = 'admin') =>
    t.app.inject({ method: 'POST', url: `/v1/orgs/${orgSlug}/members`, headers: { cookie: owner.cookie }, payload: { email, role } });
  const memberIds = async () =>
    body<{ members: { user_id: number; role: string }[] }>(await t.app.inject({ url: `/v1/orgs/${orgSlug}/members`, headers: { cookie: owner.cookie } })).members;
  const roleOf = async (userId: number) => (await memberIds()).find((m) => m.user_id === userId)?.role;
  const view = (token: string) => t.app.inject({ url: `/v1/invites/${token}` });
  const accept = (token: string, headers: Headers) => t.app.inject({ method: 'POST', url: `/v1/invites/${token}/accept`, headers });

  /** The token of the newest invite link emailed to this address. */
  async function tokenFor(email: string): Promise<string> {
    const row = await t.ctx.db.selectFrom('outbox').select('payload').where('recipient', '=', email).where('topic', '=', 'org.invite').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const token = /http:\/\/muster\.test\/invites\/([A-Za-z0-9_-]+)/.exec(row.payload)?.[1];
    assert.ok(token, 'the invite email carries its link');
    return token;
  }

  test('registering an invited address does not join the org; proving it does, with the invited role', async () => {
    const email = uniqueEmail('invitee');
    assert.deepEqual(body(await invite(email)), { invited: true, email, role: 'admin' });
    const u = await register(t.app, { email, verified: false });
    assert.equal(await roleOf(u.id), undefined, 'the takeover of issue #14 is gone');
    await verifyEmail(t.app, email);
    assert.equal(await roleOf(u.id), 'admin');
    const pending = body<{ invites: unknown[] }>(await t.app.inject({ url: `/v1/orgs/${orgSlug}/members`, headers: { cookie: owner.cookie } })).invites;
    assert.ok(!JSON.stringify(pending).includes(email), 'the invite is no longer pending');
  });

  test('adding an unverified account invites it; a verified one joins at once', async () => {
    const unproven = await register(t.app, { verified: false });
    const res = await invite(unproven.email, 'member');
    assert.equal(res.statusCode, 201);
    assert.deepEqual(body(res), { invited: true, email: unproven.email, role: 'member' });
    assert.equal(await roleOf(unproven.id), undefined);
    const proven = await register(t.app);
    assert.deepEqual(body(await invite(proven.email, 'member')), { user_id: proven.id, email: proven.email, name: proven.name, role: 'member' });
    assert.equal((await invite(proven.email)).statusCode, 409, 'already a member');
  });

  test('the link shows the invite to anyone holding it, and nothing for an unknown token', async () => {
    const email = uniqueEmail('viewer');
    await invite(email, 'member');
    const token = await tokenFor(email);
    const res = await view(token);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res), { org: { name: 'Water Board', slug: orgSlug }, email, role: 'member', expires_at: body<{ expires_at: string }>(res).expires_at });
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal((await view('A'.repeat(32))).statusCode, 404);
    assert.equal((await view('bad token!')).statusCode, 422);
  });

  test('accepting through the link: the invited account joins and is proven; another account is 403; the link then is spent', async () => {
    const u = await register(t.app, { verified: false });
    const cookie = await login(t.app, u.email, u.password);
    await invite(u.email, 'member');
    const token = await tokenFor(u.email);
    const stranger = await signUp(t.app);
    assert.equal((await accept(token, { cookie: stranger.cookie })).statusCode, 403);
    assert.equal((await accept(token, {})).statusCode, 401);
    const res = await accept(token, { cookie });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res), { org: { id: body<{ org: { id: number } }>(res).org.id, name: 'Water Board', slug: orgSlug }, role: 'member', email_verified: true });
    assert.equal(await roleOf(u.id), 'member');
    assert.equal(body<{ email_verified: boolean }>(await t.app.inject({ url: '/v1/auth/me', headers: { cookie } })).email_verified, true);
    assert.equal((await accept(token, { cookie })).statusCode, 404);
    assert.equal((await view(token)).statusCode, 404);
  });

  test('registering through the link proves the address and joins; a token of another address is 422', async () => {
    const email = uniqueEmail('linked');
    await invite(email, 'member');
    const token = await tokenFor(email);
    const wrong = await t.app.inject({ method: 'POST', url: '/v1/users', payload: { email: uniqueEmail('other'), password: 'correct horse battery', name: 'Other', invite_token: token } });
    assert.equal(wrong.statusCode, 422);
    assert.equal(body<{ details: { field: string }[] }>(wrong).details[0]!.field, 'invite_token');
    const res = await t.app.inject({ method: 'POST', url: '/v1/users', payload: { email, password: 'correct horse battery', name: 'Linked', invite_token: token } });
    assert.equal(res.statusCode, 201, res.body);
    const id = body<{ id: number }>(res).id;
    assert.equal(await roleOf(id), 'member');
    const cookie = await login(t.app, email, 'correct horse battery');
    assert.equal(body<{ email_verified: boolean }>(await t.app.inject({ url: '/v1/auth/me', headers: { cookie } })).email_verified, true);
  });

  test('concurrent proofs of one address (link, code, admin) add one membership and no error', async () => {
    const u = await register(t.app, { verified: false });
    const cookie = await login(t.app, u.email, u.password);
    await invite(u.email, 'member');
    const token = await tokenFor(u.email);
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => accept(token, { cookie })),
      verifyEmail(t.app, u.email).then(() => ({ statusCode: 200 })),
    ]);
    for (const a of answers) assert.ok([200, 404].includes(a.statusCode), `answered ${a.statusCode}`);
    assert.equal((await memberIds()).filter((m) => m.user_id === u.id).length, 1);
  });
  // Last: it moves the clock past every session's life.
  test('inviting again sends a fresh link and retires the old one; a link expires after 14 days', async () => {
    const email = uniqueEmail('again');
    await invite(email, 'member');
    const old = await tokenFor(email);
    await invite(email, 'admin');
    const fresh = await tokenFor(email);
    assert.equal((await view(old)).statusCode, 404);
    assert.equal(body<{ role: string }>(await view(fresh)).role, 'admin');
    const late = await register(t.app, { verified: false });
    await invite(late.email, 'member');
    t.clock.advance(14 * DAY);
    assert.equal((await view(fresh)).statusCode, 404);
    // Proving the address after the invite expired joins nothing (sessions have expired too: read the table).
    await t.app.inject({ method: 'POST', url: '/v1/auth/verify-email/resend', payload: { email: late.email } });
    await verifyEmail(t.app, late.email);
    const rows = await t.ctx.db.selectFrom('memberships').select('org_id').where('user_id', '=', late.id).execute();
    assert.equal(rows.length, 1, 'only their personal org');
  });

});
