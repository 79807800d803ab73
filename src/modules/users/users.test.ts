import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, testPasswords, type TestApp } from '../../../test/helpers.js';
import { createPasswordHasher } from '../../lib/passwords.js';
import { createKey, register, signUp, uniqueEmail } from '../../../test/factories.js';

describe('users', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ MUSTER_ADMIN_EMAILS: 'Boss@Example.com' });
  });
  after(() => t.close());

  const post = (payload: unknown) => t.app.inject({ method: 'POST', url: '/v1/users', payload: payload as object });

  describe('POST /v1/users', () => {
    test('registers with plan free, a slug from the name and the UTC default', async () => {
      const email = uniqueEmail('ada');
      const res = await post({ email, password: 'correct horse', name: 'Ada Lovelace' });
      assert.equal(res.statusCode, 201);
      const user = body(res);
      assert.deepEqual(Object.keys(user).sort(), ['email', 'id', 'name', 'plan', 'slug', 'timezone']);
      assert.equal(typeof user.id, 'number');
      assert.equal(user.email, email);
      assert.equal(user.plan, 'free');
      assert.equal(user.slug, 'ada-lovelace');
      assert.equal(user.timezone, 'UTC');
      assert.equal(res.body.includes('password'), false);
    });

    test("stores the password as an Argon2id hash at OWASP's cost (the service's hasher, not the tests' cheaper one)", async () => {
      const service = await buildTestApp({}, { passwords: createPasswordHasher() });
      try {
        const email = uniqueEmail('owasp');
        const { id } = await register(service.app, { email, password: 'my secret pass' });
        const row = await service.ctx.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow();
        assert.match(row.password_hash ?? '', /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
        const login = await service.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email, password: 'my secret pass' } });
        assert.equal(login.statusCode, 200);
        // A hash carries its own cost: one made at another cost still verifies (and a wrong password does not).
        const cheap = await testPasswords.hash('other pass');
        assert.equal(await service.ctx.passwords.verify(cheap, 'other pass'), true);
        assert.equal(await service.ctx.passwords.verify(cheap, 'other pasS'), false);
      } finally {
        await service.close();
      }
    });

    test('lower-cases the email and refuses a duplicate in any case with 409', async () => {
      const email = uniqueEmail('dup');
      const first = await post({ email: email.toUpperCase(), password: 'correct horse', name: 'Dup' });
      assert.equal(body(first).email, email);
      const again = await post({ email, password: 'correct horse', name: 'Dup' });
      assert.equal(again.statusCode, 409);
      assert.deepEqual(body(again), { error: 'Email already registered', code: 'conflict' });
    });

    test('gives each user a unique slug derived from the name', async () => {
      const a = await register(t.app, { name: 'José Núñez' });
      const b = await register(t.app, { name: 'José Núñez' });
      const c = await register(t.app, { name: '!!!' });
      assert.equal(a.slug, 'jose-nunez');
      assert.equal(b.slug, 'jose-nunez-2');
      assert.match(c.slug, /^user(-\d+)?$/);
    });

    test('keeps a valid IANA time zone', async () => {
      const res = await post({ email: uniqueEmail(), password: 'correct horse', name: 'Tz', timezone: 'America/New_York' });
      assert.equal(body(res).timezone, 'America/New_York');
    });

    test('refuses bad input with 422 naming each field', async () => {
      const cases: [unknown, string[]][] = [
        [{ email: uniqueEmail(), password: 'short', name: 'A' }, ['password']],
        [{ email: uniqueEmail(), password: '1234567', name: 'A' }, ['password']],
        [{ email: 'not-an-email', password: 'correct horse', name: 'A' }, ['email']],
        [{ email: uniqueEmail(), password: 'correct horse', name: '   ' }, ['name']],
        [{ email: uniqueEmail(), password: 'correct horse', name: 'A', timezone: 'Mars/Olympus' }, ['timezone']],
        [{ email: uniqueEmail(), password: 'correct horse', name: 42 }, ['name']],
        [{}, ['email', 'password', 'name']],
      ];
      for (const [payload, fields] of cases) {
        const res = await post(payload);
        assert.equal(res.statusCode, 422, JSON.stringify(payload));
        const b = body<{ code: string; details: { field: string }[] }>(res);
        assert.equal(b.code, 'validation_failed');
        assert.deepEqual([...new Set(b.details.map((d) => d.field))].sort(), fields.sort(), JSON.stringify(payload));
      }
    });

    test('accepts a password of exactly 8 characters', async () => {
      const res = await post({ email: uniqueEmail(), password: '12345678', name: 'Eight' });
      assert.equal(res.statusCode, 201);
    });

    test('creates a personal primary org with the user as owner', async () => {
      const { id, slug } = await register(t.app, { name: 'Org Owner' });
      const rows = await t.ctx.db
        .selectFrom('memberships')
        .innerJoin('orgs', 'orgs.id', 'memberships.org_id')
        .select(['orgs.slug', 'orgs.personal', 'memberships.role', 'memberships.is_primary'])
        .where('memberships.user_id', '=', id)
        .execute();
      assert.deepEqual(rows, [{ slug, personal: 1, role: 'owner', is_primary: 1 }]);
    });
  });

  describe('admin routes', () => {
    test('the first user of a fresh instance is admin; later users are not', async () => {
      const fresh = await buildTestApp();
      try {
        const first = await signUp(fresh.app);
        const second = await signUp(fresh.app);
        const me = (cookie: string) => fresh.app.inject({ url: '/v1/auth/me', headers: { cookie } });
        assert.equal(body(await me(first.cookie)).admin, true);
        assert.equal(body(await me(second.cookie)).admin, false);
        assert.equal((await fresh.app.inject({ url: '/v1/users', headers: { cookie: first.cookie } })).statusCode, 200);
        const refused = await fresh.app.inject({ url: '/v1/users', headers: { cookie: second.cookie } });
        assert.equal(refused.statusCode, 403);
        assert.deepEqual(body(refused), { error: 'Forbidden', code: 'forbidden' });
      } finally {
        await fresh.close();
      }
    });

    test('MUSTER_ADMIN_EMAILS makes an admin, compared case-insensitively', async () => {
      await signUp(t.app); // not the first user of this file's instance any more
      const boss = await signUp(t.app, { email: 'boss@example.com' });
      const list = await t.app.inject({ url: '/v1/users?limit=2&page=1', headers: { cookie: boss.cookie } });
      assert.equal(list.statusCode, 200);
      const b = body<{ users: { id: number; admin: boolean; email: string }[]; total: number; page: number; limit: number }>(list);
      assert.equal(b.users.length, 2);
      assert.equal(b.page, 1);
      assert.equal(b.limit, 2);
      assert.ok(b.total >= 3);
      assert.ok(b.users[0]!.id < b.users[1]!.id, 'oldest first');
      const page2 = body<{ users: { id: number }[] }>(await t.app.inject({ url: '/v1/users?limit=2&page=2', headers: { cookie: boss.cookie } }));
      assert.ok(page2.users[0]!.id > b.users[1]!.id);
    });

    test('GET /v1/users refuses anonymous callers with 401 and validates paging', async () => {
      assert.equal((await t.app.inject({ url: '/v1/users' })).statusCode, 401);
      const boss = await signUp(t.app, { email: uniqueEmail('x') });
      for (const q of ['limit=0', 'limit=201', 'page=0', 'limit=abc']) {
        const res = await t.app.inject({ url: `/v1/users?${q}`, headers: { cookie: boss.cookie } });
        // Paging is validated before the role check is reached, for every caller.
        assert.equal(res.statusCode, 422, q);
      }
    });

    test('PATCH /v1/users/:id changes the plan for admins only', async () => {
      const fresh = await buildTestApp();
      try {
        const admin = await signUp(fresh.app);
        const other = await signUp(fresh.app);
        const liveKey = (await createKey(fresh.app, admin.cookie, 'live')).key;
        const patch = (id: number, payload: object, headers: Record<string, string> = {}) =>
          fresh.app.inject({ method: 'PATCH', url: `/v1/users/${id}`, payload, headers });

        const ok = await patch(other.id, { plan: 'agency' }, { 'x-api-key': liveKey });
        assert.equal(ok.statusCode, 200);
        assert.equal(body(ok).plan, 'agency');
        const me = await fresh.app.inject({ url: '/v1/auth/me', headers: { cookie: other.cookie } });
        assert.equal(body(me).plan, 'agency');

        assert.equal((await patch(other.id, { plan: 'platinum' }, { 'x-api-key': liveKey })).statusCode, 422);
        assert.equal((await patch(other.id, {}, { 'x-api-key': liveKey })).statusCode, 422);
        assert.equal((await patch(999_999, { plan: 'starter' }, { 'x-api-key': liveKey })).statusCode, 404);
        assert.equal((await patch(admin.id, { plan: 'enterprise' }, { cookie: other.cookie })).statusCode, 403);
        assert.equal((await patch(other.id, { plan: 'free' })).statusCode, 401);
        assert.equal(body(await fresh.app.inject({ url: '/v1/auth/me', headers: { cookie: other.cookie } })).plan, 'agency');
      } finally {
        await fresh.close();
      }
    });
  });

  describe('the default plan of new registrations (GET, PATCH /v1/admin/settings)', () => {
    test('free until an admin chooses another; then registrations answer it; admins only', async () => {
      const fresh = await buildTestApp();
      try {
        const admin = await signUp(fresh.app);
        const other = await signUp(fresh.app);
        const settings = (method: 'GET' | 'PATCH', cookie?: string, payload?: object) =>
          fresh.app.inject({ method, url: '/v1/admin/settings', headers: cookie ? { cookie } : {}, ...(payload ? { payload } : {}) });
        assert.deepEqual(body(await settings('GET', admin.cookie)), { default_plan: 'free' });
        assert.equal(body(await fresh.app.inject({ method: 'POST', url: '/v1/users', payload: { email: uniqueEmail('n'), password: 'correct horse', name: 'Before' } })).plan, 'free');

        assert.equal((await settings('GET', other.cookie)).statusCode, 403);
        assert.equal((await settings('PATCH', other.cookie, { default_plan: 'enterprise' })).statusCode, 403);
        assert.equal((await settings('GET')).statusCode, 401);
        const bad = await settings('PATCH', admin.cookie, { default_plan: 'platinum' });
        assert.equal(bad.statusCode, 422);
        assert.deepEqual(body<{ details: { field: string }[] }>(bad).details.map((d) => d.field), ['default_plan']);

        const set = await settings('PATCH', admin.cookie, { default_plan: 'agency' });
        assert.equal(set.statusCode, 200, set.body);
        assert.deepEqual(body(set), { default_plan: 'agency' });
        const after = await fresh.app.inject({ method: 'POST', url: '/v1/users', payload: { email: uniqueEmail('n'), password: 'correct horse', name: 'After' } });
        assert.equal(body(after).plan, 'agency');
        // Existing accounts keep theirs.
        assert.equal(body(await fresh.app.inject({ url: '/v1/auth/me', headers: { cookie: other.cookie } })).plan, 'free');
      } finally {
        await fresh.close();
      }
    });
  });

  describe('GET /v1/u/:slug', () => {
    test('answers the public profile without credentials and without private fields', async () => {
      const user = await register(t.app, { name: 'Public Person', timezone: 'Europe/Paris' });
      const res = await t.app.inject({ url: `/v1/u/${user.slug}` });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(body(res), { id: user.id, name: 'Public Person', slug: user.slug, timezone: 'Europe/Paris', event_types: [] });
    });

    test('answers 404 for an unknown slug', async () => {
      const res = await t.app.inject({ url: '/v1/u/nobody-here' });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(body(res), { error: 'Not found', code: 'not_found' });
    });
  });
});
