// Account deletion under concurrency (issue #22), on both engines:
// (a) DELETE /v1/auth/me while the same person creates signals, API keys, devices and push
//     subscriptions through their other session and their key: afterwards nothing of theirs
//     remains and no request answered 5xx;
// (b) two owners of one org (with another member) delete their accounts at once: one goes, the
//     other gets 409, and the org always keeps an owner;
// (c) an owner deletes their account while the other owner is demoted or leaves: same invariant.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, testDialect, type TestApp, type Headers } from '../helpers.js';
import { createKey, login, signUp, uniqueEmail, type TestUser } from '../factories.js';
import { browserKeys } from '../peers.js';
import { sharedOrg } from '../world.js';

describe(`account deletion races (${testDialect})`, () => {
  let t: TestApp;
  let root: TestUser; // the instance admin: owner of the shared org of (a)
  let org: { id: number; slug: string };
  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' });
    org = await sharedOrg(t.app, { by: root, lift: root });
  });
  after(() => t.close());

  const as = (u: TestUser): Headers => ({ cookie: u.cookie });
  const deleteMe = (u: TestUser) => t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: as(u), payload: { password: u.password } });
  const no5xx = (label: string, results: LightMyRequestResponse[]) => {
    const failed = results.filter((r) => r.statusCode >= 500).map((r) => `${r.statusCode} ${r.body}`);
    assert.deepEqual(failed, [], `${label}: no request answers 5xx`);
  };

  /** The org's members and roles, straight from the database. */
  const membersOf = (orgId: number) => t.ctx.db.selectFrom('memberships').select(['user_id', 'role']).where('org_id', '=', orgId).execute();
  async function assertOwned(orgId: number, label: string) {
    const members = await membersOf(orgId);
    assert.ok(members.length > 0, `${label}: the org keeps its other member`);
    assert.ok(
      members.some((m) => m.role === 'owner'),
      `${label}: the org has members ${JSON.stringify(members)} and no owner`,
    );
  }

  test('deleting an account while the same person creates signals, keys, devices and push subscriptions elsewhere leaves nothing of theirs', async () => {
    for (let round = 0; round < 4; round++) {
      const ada = await signUp(t.app, { name: `Racing Ada ${round}` });
      const add = await t.app.inject({ method: 'POST', url: `/v1/orgs/${org.slug}/members`, headers: as(root), payload: { email: ada.email } });
      assert.equal(add.statusCode, 201, add.body);
      const other: Headers = { cookie: await login(t.app, ada.email, ada.password) };
      const key: Headers = { 'x-api-key': (await createKey(t.app, ada.cookie, 'live', 'racing key')).key };
      const marker = `race-${round}-${Math.random().toString(36).slice(2, 8)}`;

      const create = (headers: Headers, i: number) => {
        switch (i % 5) {
          case 0:
            return t.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { type: 'note', note: `${marker}-${i}`, org_id: org.id } });
          case 1:
            return t.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { type: 'note', note: `${marker}-${i}` } });
          case 2:
            return t.app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload: { name: `${marker}-${i}`, mode: i % 2 ? 'live' : 'test' } });
          case 3:
            return t.app.inject({ method: 'POST', url: '/v1/devices', headers, payload: { name: `${marker}-${i}`, org_id: org.id } });
          default:
            return t.app.inject({
              method: 'POST',
              url: '/v1/push/subscriptions',
              headers,
              payload: { endpoint: `https://push.example.com/${uniqueEmail(marker)}`, keys: browserKeys().json },
            });
        }
      };
      // Waves of creations through the other session and the key, from before the deletion starts
      // until after it has answered, so some land during each of its steps. The deletion starts once
      // the first creation has answered: under load it could otherwise lock the user row before any
      // creation wrote, and the round would test no creation before it (CI, stop 48).
      const results: LightMyRequestResponse[] = [];
      let i = 0;
      const wave = () => Array.from({ length: 6 }, () => create(i % 2 ? other : key, i++));
      const firstWave = wave();
      const first = await firstWave[0]!;
      assert.equal(first.statusCode, 201, first.body);
      let settled = false;
      const deletion = deleteMe(ada).finally(() => {
        settled = true;
      });
      results.push(...(await Promise.all(firstWave)));
      for (let afterwards = false; !afterwards; ) {
        afterwards = settled; // the last wave starts once the deletion has answered
        results.push(...(await Promise.all(wave())));
        assert.ok(i < 3000, `round ${round}: the deletion has not answered after ${i} creations`);
        // Let the timers' phase run (SQLite's group commit starts its transactions there): answers
        // that need no I/O (401) would otherwise keep this loop in the microtask queue for ever.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const deleted = await deletion;
      assert.equal(deleted.statusCode, 200, deleted.body);
      no5xx(`round ${round}`, results);
      // A request authenticated just before the commit may find the org no longer theirs (403, 404)
      // or the row it refers to gone (409); later ones are 401.
      for (const r of results) assert.ok([201, 401, 403, 404, 409].includes(r.statusCode), `${r.statusCode} ${r.body}`);
      assert.ok(results.some((r) => r.statusCode === 201) && results.some((r) => r.statusCode === 401), `round ${round}: creations both before and after`);

      const count = async (table: 'sessions' | 'api_keys' | 'devices' | 'push_subscriptions' | 'signals' | 'memberships') =>
        Number((await t.ctx.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', ada.id).executeTakeFirstOrThrow()).n);
      for (const table of ['sessions', 'api_keys', 'devices', 'push_subscriptions', 'signals', 'memberships'] as const) {
        assert.equal(await count(table), 0, `round ${round}: ${table} of the deleted user remain`);
      }
      assert.equal(await t.ctx.db.selectFrom('users').select('id').where('id', '=', ada.id).executeTakeFirst(), undefined);
      // Nothing created in the race survived without its owner either (a signal whose user_id was cleared).
      const marked = await t.ctx.db.selectFrom('signals').select(['id', 'user_id']).where('note', 'like', `${marker}%`).execute();
      assert.deepEqual(marked, [], `round ${round}: signals created in the race remain`);
      const devices = await t.ctx.db.selectFrom('devices').select('id').where('name', 'like', `${marker}%`).execute();
      assert.deepEqual(devices, [], `round ${round}: devices created in the race remain`);
      const keys = await t.ctx.db.selectFrom('api_keys').select('id').where('name', 'like', `${marker}%`).execute();
      assert.deepEqual(keys, [], `round ${round}: keys created in the race remain`);
      // Every credential of hers is refused now.
      for (const headers of [as(ada), other, key]) assert.equal((await t.app.inject({ url: '/v1/auth/me', headers })).statusCode, 401);
    }
  });

  /** A user who may create an org: lifted to a paid plan by the instance admin. */
  async function owner(name: string) {
    return signUp(t.app, { name });
  }
  async function liftedOrgOf(owners: TestUser[]) {
    // Creating an org needs a paid plan, which the instance admin grants.
    const plan = await t.app.inject({ method: 'PATCH', url: `/v1/users/${owners[0]!.id}`, headers: as(root), payload: { plan: 'agency' } });
    assert.equal(plan.statusCode, 200, plan.body);
    const member = await signUp(t.app, { name: 'Plain Member' });
    const created = await t.app.inject({ method: 'POST', url: '/v1/orgs', headers: as(owners[0]!), payload: { name: `Race Org ${Math.random().toString(36).slice(2, 8)}` } });
    assert.equal(created.statusCode, 201, created.body);
    const org = created.json<{ id: number; slug: string }>();
    for (const u of [...owners.slice(1).map((o) => ({ email: o.email, role: 'owner' })), { email: member.email, role: 'member' }]) {
      const add = await t.app.inject({ method: 'POST', url: `/v1/orgs/${org.slug}/members`, headers: as(owners[0]!), payload: u });
      assert.equal(add.statusCode, 201, add.body);
    }
    return { org, member };
  }

  test('two owners of one org delete their accounts at once: one goes, the other gets 409, the org keeps an owner', async () => {
    for (let round = 0; round < 6; round++) {
      const a = await owner(`Owner A${round}`);
      const b = await owner(`Owner B${round}`);
      const { org } = await liftedOrgOf([a, b]);
      const results = await Promise.all([deleteMe(a), deleteMe(b)]);
      no5xx(`round ${round}`, results);
      assert.deepEqual(
        results.map((r) => r.statusCode).sort(),
        [200, 409],
        `round ${round}: ${results.map((r) => `${r.statusCode} ${r.body}`).join(' | ')}`,
      );
      await assertOwned(org.id, `round ${round}`);
    }
  });

  const demote = (slug: string, b: TestUser, by: TestUser) =>
    t.app.inject({ method: 'PATCH', url: `/v1/orgs/${slug}/members/${b.id}`, headers: as(by), payload: { role: 'member' } });
  const remove = (slug: string, b: TestUser, by: TestUser) => t.app.inject({ method: 'DELETE', url: `/v1/orgs/${slug}/members/${b.id}`, headers: as(by) });
  for (const [what, act] of [
    ['demotes themselves', (slug: string, a: TestUser, b: TestUser) => demote(slug, b, b)],
    ['leaves the org', (slug: string, a: TestUser, b: TestUser) => remove(slug, b, b)],
    ['is demoted by the deleting owner', (slug: string, a: TestUser, b: TestUser) => demote(slug, b, a)],
    ['is removed by the deleting owner', (slug: string, a: TestUser, b: TestUser) => remove(slug, b, a)],
  ] as const) {
    test(`an owner deletes their account while the other owner ${what}: one of the two is refused (409), the org keeps an owner`, async () => {
      for (let round = 0; round < 4; round++) {
        const a = await owner(`Deleting A${round}`);
        const b = await owner(`Leaving B${round}`);
        const { org } = await liftedOrgOf([a, b]);
        const results = await Promise.all([deleteMe(a), act(org.slug, a, b)]);
        no5xx(`round ${round}`, results);
        // When the deletion goes first, the deleting owner's own request after it is 401 or 409.
        const [deletion, change] = results.map((r) => r.statusCode);
        assert.ok(
          (deletion === 200 && (change === 409 || change === 401)) || (deletion === 409 && change === 200),
          `round ${round}: ${results.map((r) => `${r.statusCode} ${r.body}`).join(' | ')}`,
        );
        await assertOwned(org.id, `round ${round}`);
      }
    });
  }
});
