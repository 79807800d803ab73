import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, injector, type TestApp, type Headers } from './helpers.js';
import { createKey, login, setPlan, signUp, type TestUser } from './factories.js';
import { eventOf, listen, type SseClient, within, StreamSet } from './sse-client.js';
import { sharedOrg } from './world.js';

// Issue #14 item 1: a live stream ends when the access that opened it ends (key revoked, logout,
// session deleted or expired, membership removed or its role changed, org deleted), within a
// second, and the same credential cannot open it again.

describe('live streams end with the access that opened them', () => {
  let t: TestApp;
  let port: number;
  let root: TestUser;
  const streams = new StreamSet(() => port, '/v1/incidents/stream');

  before(async () => {
    t = await buildTestApp({ SSE_HEARTBEAT_MS: '50' });
    root = await signUp(t.app); // the first user: instance admin
    await setPlan(t.app, root.cookie, root.id, 'enterprise');
    port = await listen(t);
  });
  after(async () => {
    await streams.closeAll();
    await t.close();
  });

  const stream = (headers: Headers, path?: string) => streams.open(headers, path);
  const statusOf = async (headers: Headers, path = '/v1/incidents/stream') => (await fetch(`http://127.0.0.1:${port}${path}`, { headers })).status;
  const ends = (c: SseClient, what: string) => within(c.ended, 1_000, what);
  const { ok: call } = injector(() => t.app);
  const incident = async (headers: Headers, title: string, orgId?: number) =>
    call<{ Id: number }>('POST', '/v1/incidents', headers, { title, ...(orgId === undefined ? {} : { org_id: orgId }) });
  const receives = (c: SseClient, created: { Id: number }) => c.waitForEvent('incident.created', (p) => p.Id === created.Id, 2_000);

  /** A shared org of root's with `user` in it as a member. */
  const sharedOrgWith = (user: TestUser) => sharedOrg(t.app, { by: root, members: [{ user, role: 'member' }] });

  test('a revoked key closes its streams (both channels) within a second and cannot reopen them; other credentials stay', async () => {
    const user = await signUp(t.app);
    const [revoked, kept] = [await createKey(t.app, user.cookie, 'live'), await createKey(t.app, user.cookie, 'live')];
    const incidents = await stream({ 'x-api-key': revoked.key });
    const signals = await stream({ 'x-api-key': revoked.key }, '/v1/signals/stream');
    const other = await stream({ 'x-api-key': kept.key });
    const session = await stream({ cookie: user.cookie });

    await call('DELETE', `/v1/api-keys/${revoked.id}`, { cookie: user.cookie });
    await ends(incidents, 'the incident stream of the revoked key closing');
    await ends(signals, 'the signal stream of the revoked key closing');
    assert.equal(await statusOf({ 'x-api-key': revoked.key }), 401);
    const created = await incident({ cookie: user.cookie }, 'after the revocation');
    await receives(other, created);
    await receives(session, created);
    assert.ok(other.isOpen && session.isOpen);
  });

  test('logout closes the streams of that session only, and its cookie cannot reopen them', async () => {
    const user = await signUp(t.app);
    const second = await login(t.app, user.email, user.password);
    const first = await stream({ cookie: user.cookie });
    const other = await stream({ cookie: second });

    await call('POST', '/v1/auth/logout', { cookie: user.cookie });
    await ends(first, 'the logged-out session’s stream closing');
    assert.equal(await statusOf({ cookie: user.cookie }), 401);
    await receives(other, await incident({ cookie: second }, 'after logout'));
  });

  test('a password change closes the streams of every other session (endUserSessions), keys stay', async () => {
    const user = await signUp(t.app);
    const kept = await login(t.app, user.email, user.password);
    const key = await createKey(t.app, user.cookie, 'live');
    const ended = await stream({ cookie: user.cookie });
    const keptStream = await stream({ cookie: kept });
    const keyed = await stream({ 'x-api-key': key.key });

    const changed = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/password',
      headers: { cookie: kept },
      payload: { current_password: user.password, new_password: 'a brand new passphrase' },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    await ends(ended, 'the other session’s stream closing');
    assert.equal(await statusOf({ cookie: user.cookie }), 401);
    const created = await incident({ cookie: kept }, 'after the password change');
    await receives(keptStream, created);
    await receives(keyed, created);
  });

  test('a member removed from an org: their streams close; reopened, they no longer carry the org’s events', async () => {
    const user = await signUp(t.app);
    const org = await sharedOrgWith(user);
    const key = await createKey(t.app, user.cookie, 'live');
    const before = await stream({ 'x-api-key': key.key });
    assert.ok((eventOf(before.frames[0]!)?.org_ids ?? []).includes(org.id));
    const rootStream = await stream({ cookie: root.cookie });

    await call('DELETE', `/v1/orgs/${org.slug}/members/${user.id}`, { cookie: root.cookie });
    await ends(before, 'the removed member’s stream closing');
    assert.ok(rootStream.isOpen, 'the streams of the org’s other members stay');

    const after = await stream({ 'x-api-key': key.key });
    assert.ok(!(eventOf(after.frames[0]!)?.org_ids ?? []).includes(org.id));
    const secret = await incident({ cookie: root.cookie }, 'members only', org.id);
    await receives(rootStream, secret);
    const own = await incident({ 'x-api-key': key.key }, 'in my own org');
    await receives(after, own);
    assert.ok(!after.events.some((e) => (e.payload as { Id?: number } | undefined)?.Id === secret.Id), 'the removed member never sees the org’s incident');
  });

  test('a role change closes the member’s streams that include the org; setting the same role closes nothing', async () => {
    const user = await signUp(t.app);
    const org = await sharedOrgWith(user);
    const first = await stream({ cookie: user.cookie });
    await call('PATCH', `/v1/orgs/${org.slug}/members/${user.id}`, { cookie: root.cookie }, { role: 'admin' });
    await ends(first, 'the stream closing on a role change');

    const second = await stream({ cookie: user.cookie });
    await call('PATCH', `/v1/orgs/${org.slug}/members/${user.id}`, { cookie: root.cookie }, { role: 'admin' });
    await receives(second, await incident({ cookie: root.cookie }, 'same role', org.id));
    assert.ok(second.isOpen);
  });

  test('a deleted org closes its members’ streams', async () => {
    const user = await signUp(t.app);
    const org = await sharedOrgWith(user);
    const member = await stream({ cookie: user.cookie });
    await call('DELETE', `/v1/orgs/${org.slug}`, { cookie: root.cookie });
    await ends(member, 'the member’s stream closing with the org');
  });

  test('a revocation that lands while a stream is being opened is not missed', async () => {
    const user = await signUp(t.app);
    const key = await createKey(t.app, user.cookie, 'live');
    const slots = t.ctx.events.streamSlots;
    // The revocation commits after the auth hook and the credential read, before the stream subscribes.
    t.ctx.events.streamSlots = {
      acquire: async (userId) => {
        t.ctx.events.streamSlots = slots;
        await call('DELETE', `/v1/api-keys/${key.id}`, { cookie: user.cookie });
        return slots.acquire(userId);
      },
      close: () => slots.close(),
    };
    try {
      assert.equal(await statusOf({ 'x-api-key': key.key }), 401);
    } finally {
      t.ctx.events.streamSlots = slots;
    }
    assert.equal(t.ctx.events.hub.stats().subscribers, [...streams.clients].filter((c) => c.isOpen).length, 'no stream was left subscribed for it');
  });

  // Last: it moves the clock past every session's lifetime.
  test('a stream of a session that expires closes at the next heartbeat, and the cookie cannot reopen it', async () => {
    const user = await signUp(t.app);
    const key = await createKey(t.app, user.cookie, 'live');
    const expiring = await stream({ cookie: user.cookie });
    const keyed = await stream({ 'x-api-key': key.key });
    t.clock.advance(t.ctx.config.sessionTtlMs);
    await ends(expiring, 'the expired session’s stream closing');
    assert.equal(await statusOf({ cookie: user.cookie }), 401);
    assert.ok(keyed.isOpen, 'a key does not expire');
  });
});
