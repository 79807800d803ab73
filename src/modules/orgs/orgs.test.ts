import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { setPlan, signUp, uniqueEmail, type TestUser } from '../../../test/factories.js';

type Plan = 'free' | 'starter' | 'agency' | 'enterprise';

describe('orgs, teams, plans and locks', () => {
  let t: TestApp;
  let root: TestUser;
  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' }); // first user: instance admin
  });
  after(() => t.close());

  const call = (user: TestUser, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, headers: { cookie: user.cookie }, ...(payload ? { payload } : {}) });
  const userOn = async (plan: Plan, name = 'Planner') => {
    const u = await signUp(t.app, { name });
    if (plan !== 'free') await setPlan(t.app, root.cookie, u.id, plan);
    return u;
  };
  const newOrg = async (owner: TestUser, name: string) => {
    const res = await call(owner, 'POST', '/v1/orgs', { name });
    assert.equal(res.statusCode, 201, res.body);
    return body<{ id: number; slug: string }>(res);
  };
  const orgOf = async (user: TestUser, slug: string) => body<{ locked: boolean; role: string }>(await call(user, 'GET', `/v1/orgs/${slug}`));

  describe('orgs', () => {
    test('free and starter users may not create orgs: 403 upgrade_required', async () => {
      for (const plan of ['free', 'starter'] as const) {
        const u = await userOn(plan);
        const res = await call(u, 'POST', '/v1/orgs', { name: 'Nope' });
        assert.equal(res.statusCode, 403, plan);
        assert.deepEqual(body(res), { error: 'Upgrade required', code: 'upgrade_required', upgrade: true });
      }
    });

    test('agency creates one org besides the personal one; the second is refused', async () => {
      const u = await userOn('agency');
      const res = await call(u, 'POST', '/v1/orgs', { name: 'Acme Ops', description: 'Field crew' });
      assert.equal(res.statusCode, 201);
      const org = body(res);
      assert.equal(org.slug, 'acme-ops');
      assert.equal(org.role, 'owner');
      assert.equal(org.primary, false);
      assert.equal(org.personal, false);
      assert.equal(org.locked, false);
      assert.equal(org.description, 'Field crew');
      const second = await call(u, 'POST', '/v1/orgs', { name: 'Another' });
      assert.equal(second.statusCode, 403);
      assert.equal(body(second).code, 'upgrade_required');
    });

    test('enterprise has no org limit', async () => {
      const u = await userOn('enterprise');
      for (let i = 0; i < 3; i++) await newOrg(u, `Ent ${i}`);
      assert.equal(body<{ orgs: unknown[] }>(await call(u, 'GET', '/v1/orgs')).orgs.length, 4);
    });

    test('GET /v1/orgs lists the personal primary org with role and lock state', async () => {
      const u = await userOn('free', 'Solo Person');
      const { orgs } = body<{ orgs: Record<string, unknown>[] }>(await call(u, 'GET', '/v1/orgs'));
      assert.equal(orgs.length, 1);
      assert.deepEqual(
        { slug: orgs[0]!.slug, role: orgs[0]!.role, primary: orgs[0]!.primary, personal: orgs[0]!.personal, locked: orgs[0]!.locked },
        { slug: u.slug, role: 'owner', primary: true, personal: true, locked: false },
      );
    });

    test('slugs are validated and unique', async () => {
      const u = await userOn('enterprise');
      await newOrg(u, 'Unique Name');
      const taken = await call(u, 'POST', '/v1/orgs', { name: 'X', slug: 'unique-name' });
      assert.equal(taken.statusCode, 409);
      assert.deepEqual(body(taken), { error: 'Slug already taken', code: 'conflict' });
      const derived = await newOrg(u, 'Unique Name');
      assert.equal(derived.slug, 'unique-name-2');
      for (const slug of ['Bad Slug', '-edge', 'edge-', 'a'.repeat(41), '']) {
        const res = await call(u, 'POST', '/v1/orgs', { name: 'X', slug });
        assert.equal(res.statusCode, 422, slug);
        assert.equal(body<{ details: { field: string }[] }>(res).details[0]!.field, 'slug');
      }
      const renamed = await call(u, 'PATCH', `/v1/orgs/${derived.slug}`, { slug: 'unique-name' });
      assert.equal(renamed.statusCode, 409);
      const ok = await call(u, 'PATCH', `/v1/orgs/${derived.slug}`, { slug: 'fresh-slug', name: 'Fresh' });
      assert.equal(ok.statusCode, 200);
      assert.equal(body(ok).slug, 'fresh-slug');
      assert.equal((await call(u, 'GET', `/v1/orgs/${derived.slug}`)).statusCode, 404);
    });

    test('the personal org cannot be deleted; another org can, with its teams', async () => {
      const u = await userOn('agency');
      const personal = await call(u, 'DELETE', `/v1/orgs/${u.slug}`);
      assert.equal(personal.statusCode, 409);
      const org = await newOrg(u, 'Short Lived');
      await call(u, 'POST', `/v1/orgs/${org.slug}/teams`, { name: 'Crew' });
      const res = await call(u, 'DELETE', `/v1/orgs/${org.slug}`);
      assert.deepEqual(body(res), { id: org.id, deleted: true });
      assert.equal(await t.ctx.db.selectFrom('teams').select('id').where('org_id', '=', org.id).executeTakeFirst(), undefined);
    });
  });

  describe('teams', () => {
    test('teams need agency or enterprise', async () => {
      const u = await userOn('starter');
      const res = await call(u, 'POST', `/v1/orgs/${u.slug}/teams`, { name: 'Crew' });
      assert.equal(res.statusCode, 403);
      assert.equal(body(res).code, 'upgrade_required');
    });

    test('agency allows five teams per org; the sixth is refused', async () => {
      const u = await userOn('agency');
      for (let i = 1; i <= 5; i++) assert.equal((await call(u, 'POST', `/v1/orgs/${u.slug}/teams`, { name: `Team ${i}` })).statusCode, 201);
      const sixth = await call(u, 'POST', `/v1/orgs/${u.slug}/teams`, { name: 'Team 6' });
      assert.equal(sixth.statusCode, 403);
      assert.equal(body(sixth).code, 'upgrade_required');
    });

    test('routing is round_robin by default, random on request, anything else 422; slugs are unique per org', async () => {
      const u = await userOn('agency');
      const a = body(await call(u, 'POST', `/v1/orgs/${u.slug}/teams`, { name: 'Day Crew' }));
      assert.equal(a.routing, 'round_robin');
      assert.equal(a.slug, 'day-crew');
      assert.equal(a.locked, false);
      const b = body(await call(u, 'POST', `/v1/orgs/${u.slug}/teams`, { name: 'Night', routing: 'random' }));
      assert.equal(b.routing, 'random');
      const bad = await call(u, 'POST', `/v1/orgs/${u.slug}/teams`, { name: 'X', routing: 'fifo' });
      assert.equal(bad.statusCode, 422);
      assert.deepEqual(body(bad).details, [{ field: 'routing', message: 'must be one of: round_robin, random' }]);
      assert.equal((await call(u, 'POST', `/v1/orgs/${u.slug}/teams`, { name: 'X', slug: 'day-crew' })).statusCode, 409);
      const other = await userOn('agency');
      assert.equal((await call(other, 'POST', `/v1/orgs/${other.slug}/teams`, { name: 'X', slug: 'day-crew' })).statusCode, 201);
      const patched = await call(u, 'PATCH', `/v1/orgs/${u.slug}/teams/day-crew`, { routing: 'random', description: 'Days' });
      assert.equal(body(patched).routing, 'random');
    });

    test('only org members join a team, once; a team holds 25 members on agency', async () => {
      const owner = await userOn('agency');
      const outsider = await userOn('free');
      const created = body<{ members: { user_id: number; name: string; active: boolean; locked: boolean }[] }>(await call(owner, 'POST', `/v1/orgs/${owner.slug}/teams`, { name: 'Big' }));
      // The creator is its first active member, and the answer says so (issue 33).
      assert.deepEqual(created.members, [{ user_id: owner.id, name: owner.name, active: true, locked: false }]);
      const url = `/v1/orgs/${owner.slug}/teams/big/members`;
      const notMember = await call(owner, 'POST', url, { user_id: outsider.id });
      assert.equal(notMember.statusCode, 422);
      assert.deepEqual(body(notMember).details, [{ field: 'user_id', message: 'is not a member of this org' }]);

      assert.deepEqual(body<{ members: { user_id: number }[] }>(await call(owner, 'GET', url)).members.map((m) => m.user_id), [owner.id]);
      assert.equal((await call(owner, 'POST', url, { user_id: owner.id })).statusCode, 409);
      for (let i = 0; i < 24; i++) {
        const m = await signUp(t.app);
        assert.equal((await call(owner, 'POST', `/v1/orgs/${owner.slug}/members`, { email: m.email })).statusCode, 201);
        assert.equal((await call(owner, 'POST', url, { user_id: m.id, active: i % 2 === 0 })).statusCode, 201);
      }
      const extra = await signUp(t.app);
      await call(owner, 'POST', `/v1/orgs/${owner.slug}/members`, { email: extra.email });
      const refused = await call(owner, 'POST', url, { user_id: extra.id });
      assert.equal(refused.statusCode, 403);
      assert.equal(body(refused).code, 'upgrade_required');
      const members = body<{ members: { active: boolean }[] }>(await call(owner, 'GET', url)).members;
      assert.equal(members.length, 25);
      assert.equal(members.filter((m) => !m.active).length, 12);
    });

    test('removing an org member also removes them from its teams', async () => {
      const owner = await userOn('agency');
      const m = await signUp(t.app);
      await call(owner, 'POST', `/v1/orgs/${owner.slug}/members`, { email: m.email });
      await call(owner, 'POST', `/v1/orgs/${owner.slug}/teams`, { name: 'Crew' });
      await call(owner, 'POST', `/v1/orgs/${owner.slug}/teams/crew/members`, { user_id: m.id });
      assert.equal((await call(owner, 'DELETE', `/v1/orgs/${owner.slug}/members/${m.id}`)).statusCode, 200);
      const members = body<{ members: { user_id: number }[] }>(await call(owner, 'GET', `/v1/orgs/${owner.slug}/teams/crew/members`)).members;
      assert.deepEqual(members.map((x) => x.user_id), [owner.id], 'the creator stays; the removed member is gone');
    });
  });

  describe('over-limit locking', () => {
    test('a downgrade locks the newest orgs, keeps the oldest usable, and an upgrade unlocks them', async () => {
      const u = await userOn('enterprise');
      const [a, b, c] = [await newOrg(u, 'Org A'), await newOrg(u, 'Org B'), await newOrg(u, 'Org C')];
      await setPlan(t.app, root.cookie, u.id, 'agency');
      assert.deepEqual([(await orgOf(u, a.slug)).locked, (await orgOf(u, b.slug)).locked, (await orgOf(u, c.slug)).locked], [false, true, true]);
      assert.equal((await orgOf(u, u.slug)).locked, false, 'the personal org is never locked');

      const write = await call(u, 'PATCH', `/v1/orgs/${b.slug}`, { description: 'edit' });
      assert.equal(write.statusCode, 403);
      assert.deepEqual(body(write), { error: 'Upgrade required', code: 'resource_locked', upgrade: true });
      assert.equal((await call(u, 'POST', `/v1/orgs/${b.slug}/teams`, { name: 'X' })).statusCode, 403);
      assert.equal((await call(u, 'POST', `/v1/orgs/${b.slug}/members`, { email: uniqueEmail() })).statusCode, 403);
      assert.equal((await call(u, 'GET', `/v1/orgs/${b.slug}/members`)).statusCode, 200, 'still readable');
      assert.equal((await call(u, 'PATCH', `/v1/orgs/${a.slug}`, { description: 'edit' })).statusCode, 200);

      // Deleting a locked org is allowed, and frees nothing for the locked one (the oldest is usable already).
      assert.equal((await call(u, 'DELETE', `/v1/orgs/${c.slug}`)).statusCode, 200);
      await setPlan(t.app, root.cookie, u.id, 'enterprise');
      assert.equal((await orgOf(u, b.slug)).locked, false);
      assert.equal((await call(u, 'PATCH', `/v1/orgs/${b.slug}`, { description: 'edit' })).statusCode, 200);
    });

    test('a downgrade locks the newest teams and team members; an upgrade unlocks them', async () => {
      const u = await userOn('enterprise');
      const teamsUrl = `/v1/orgs/${u.slug}/teams`;
      for (let i = 1; i <= 7; i++) await call(u, 'POST', teamsUrl, { name: `T${i}` });
      const crew = `${teamsUrl}/t1/members`;
      await call(u, 'POST', crew, { user_id: u.id });
      const ids: number[] = [u.id];
      for (let i = 0; i < 26; i++) {
        const m = await signUp(t.app);
        await call(u, 'POST', `/v1/orgs/${u.slug}/members`, { email: m.email });
        await call(u, 'POST', crew, { user_id: m.id });
        ids.push(m.id);
      }
      await setPlan(t.app, root.cookie, u.id, 'agency');
      const teams = body<{ teams: { slug: string; locked: boolean }[] }>(await call(u, 'GET', teamsUrl)).teams;
      assert.deepEqual(teams.map((x) => x.locked), [false, false, false, false, false, true, true]);
      assert.equal((await call(u, 'PATCH', `${teamsUrl}/t6`, { description: 'x' })).statusCode, 403);
      assert.equal(body(await call(u, 'PATCH', `${teamsUrl}/t6`, { description: 'x' })).code, 'resource_locked');
      assert.equal((await call(u, 'PATCH', `${teamsUrl}/t5`, { description: 'x' })).statusCode, 200);

      const members = body<{ members: { user_id: number; locked: boolean }[] }>(await call(u, 'GET', crew)).members;
      assert.equal(members.length, 27);
      assert.deepEqual(members.filter((m) => m.locked).map((m) => m.user_id), ids.slice(25), 'the two newest members are locked');
      assert.equal((await call(u, 'PATCH', `${crew}/${ids[26]}`, { active: false })).statusCode, 403);
      assert.equal((await call(u, 'PATCH', `${crew}/${ids[0]}`, { active: false })).statusCode, 200);

      await setPlan(t.app, root.cookie, u.id, 'free');
      const allLocked = body<{ teams: { locked: boolean }[] }>(await call(u, 'GET', teamsUrl)).teams;
      assert.ok(allLocked.every((x) => x.locked), 'free has no teams: all are locked, none deleted');
      assert.equal(allLocked.length, 7);

      await setPlan(t.app, root.cookie, u.id, 'enterprise');
      const unlocked = body<{ teams: { locked: boolean }[] }>(await call(u, 'GET', teamsUrl)).teams;
      assert.ok(unlocked.every((x) => !x.locked));
      assert.ok(body<{ members: { locked: boolean }[] }>(await call(u, 'GET', crew)).members.every((m) => !m.locked));
    });
  });

  describe('members, invites and owners', () => {
    test('an invite to an unknown email is emailed and accepted at registration with the invited role', async () => {
      const owner = await userOn('agency');
      const org = await newOrg(owner, 'Invite Co');
      const email = uniqueEmail('invitee');
      const res = await call(owner, 'POST', `/v1/orgs/${org.slug}/members`, { email: email.toUpperCase(), role: 'admin' });
      assert.equal(res.statusCode, 201);
      assert.deepEqual(body(res), { invited: true, email, role: 'admin' });
      const mail = await t.ctx.db.selectFrom('outbox').selectAll().where('recipient', '=', email).executeTakeFirstOrThrow();
      assert.equal(mail.topic, 'org.invite');
      assert.equal(mail.org_id, org.id);
      assert.match((JSON.parse(mail.payload) as { text: string }).text, /Invite Co/);
      const pending = body<{ invites: { email: string; role: string }[] }>(await call(owner, 'GET', `/v1/orgs/${org.slug}/members`)).invites;
      assert.deepEqual(pending.map((i) => [i.email, i.role]), [[email, 'admin']]);

      const invitee = await signUp(t.app, { email, name: 'Invitee' });
      const theirs = body<{ orgs: { slug: string; role: string; primary: boolean }[] }>(await call(invitee, 'GET', '/v1/orgs')).orgs;
      assert.deepEqual(theirs.find((o) => o.slug === org.slug), { ...theirs.find((o) => o.slug === org.slug), role: 'admin', primary: false });
      assert.equal(theirs.find((o) => o.primary)?.slug, invitee.slug, 'their personal org stays primary');
      assert.deepEqual(body(await call(owner, 'GET', `/v1/orgs/${org.slug}/members`)).invites, []);
    });

    test('adding a registered user makes them a member at once; twice is 409', async () => {
      const owner = await userOn('agency');
      const m = await signUp(t.app, { name: 'Joiner' });
      const res = await call(owner, 'POST', `/v1/orgs/${owner.slug}/members`, { email: m.email });
      assert.equal(res.statusCode, 201);
      assert.deepEqual(body(res), { user_id: m.id, email: m.email, name: 'Joiner', role: 'member' });
      assert.equal((await call(owner, 'POST', `/v1/orgs/${owner.slug}/members`, { email: m.email })).statusCode, 409);
      assert.equal((await call(owner, 'POST', `/v1/orgs/${owner.slug}/members`, { email: m.email, role: 'boss' })).statusCode, 422);
    });

    test('the last owner can be neither demoted nor removed; with two owners one may go', async () => {
      const owner = await userOn('agency');
      const org = await newOrg(owner, 'Owners Co');
      const url = `/v1/orgs/${org.slug}/members`;
      const demote = await call(owner, 'PATCH', `${url}/${owner.id}`, { role: 'admin' });
      assert.equal(demote.statusCode, 409);
      assert.deepEqual(body(demote), { error: 'An org needs at least one owner', code: 'conflict' });
      assert.equal((await call(owner, 'DELETE', `${url}/${owner.id}`)).statusCode, 409);

      const second = await signUp(t.app);
      await call(owner, 'POST', url, { email: second.email, role: 'owner' });
      assert.equal((await call(owner, 'PATCH', `${url}/${owner.id}`, { role: 'admin' })).statusCode, 200);
      assert.equal((await call(second, 'DELETE', `${url}/${second.id}`)).statusCode, 409, 'now second is the last owner');
    });

    test("when the billing owner leaves, the remaining owner's plan sets the limits", async () => {
      const payer = await userOn('agency');
      const org = await newOrg(payer, 'Billing Co');
      const heir = await userOn('free');
      await call(payer, 'POST', `/v1/orgs/${org.slug}/members`, { email: heir.email, role: 'owner' });
      assert.equal((await orgOf(heir, org.slug)).locked, false);
      assert.equal((await call(payer, 'DELETE', `/v1/orgs/${org.slug}/members/${payer.id}`)).statusCode, 200);
      assert.equal((await orgOf(heir, org.slug)).locked, true, 'the free heir has no room for an org');
      await setPlan(t.app, root.cookie, heir.id, 'agency');
      assert.equal((await orgOf(heir, org.slug)).locked, false);
    });

    test('the owner of a personal org stays its owner', async () => {
      const u = await userOn('agency');
      const other = await signUp(t.app);
      await call(u, 'POST', `/v1/orgs/${u.slug}/members`, { email: other.email, role: 'owner' });
      assert.equal((await call(other, 'DELETE', `/v1/orgs/${u.slug}/members/${u.id}`)).statusCode, 409);
      assert.equal((await call(other, 'PATCH', `/v1/orgs/${u.slug}/members/${u.id}`, { role: 'member' })).statusCode, 409);
    });
  });
});
