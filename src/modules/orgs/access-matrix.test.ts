// The access matrix of orgs, members and teams: every route against every kind of caller
// (owner, admin, member, outsider, anonymous). One test per route; each cell runs against its own
// fixture when the call destroys or uses up something, so no cell depends on another.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { body, buildTestApp, type TestApp, type Headers, type Method } from '../../../test/helpers.js';
import { createKey, register, setPlan, signUp, uniqueEmail, type TestUser } from '../../../test/factories.js';
import { sharedOrg } from '../../../test/world.js';

type Actor = 'owner' | 'admin' | 'member' | 'outsider' | 'anonymous';
const ACTORS: readonly Actor[] = ['owner', 'admin', 'member', 'outsider', 'anonymous'];
/** The actors who hold a credential. */
const AUTHENTICATED: readonly Actor[] = ['owner', 'admin', 'member', 'outsider'];
/** The actors who belong to the org. */
const ORG_MEMBERS: readonly Actor[] = ['owner', 'admin', 'member'];


const UNAUTHORIZED = { error: 'Unauthorized', code: 'unauthorized' };
const FORBIDDEN = { error: 'Forbidden', code: 'forbidden' };
const NOT_FOUND = { error: 'Not found', code: 'not_found' };
const REFUSALS: Partial<Record<number, object>> = { 401: UNAUTHORIZED, 403: FORBIDDEN, 404: NOT_FOUND };

const UNKNOWN_ORG = 'no-such-org-anywhere';
const UNKNOWN_TEAM = 'no-such-team-anywhere';

/** An org with a team, as each actor reaches it. */
interface World {
  org: string;
  orgId: number;
  team: string;
  /** The org's owner and billing owner. */
  owner: TestUser;
  as: Record<Actor, Headers>;
}

/** A world and the user a route acts on (a member to promote, a user to add...). */
interface Scene extends World {
  target: number;
  targetEmail: string;
}

interface Row {
  route: string;
  method: Method;
  url: (s: Scene) => string;
  body?: (s: Scene) => object;
  /** The fixture of one cell: called once per actor. */
  scene: () => Promise<Scene>;
  expect: Record<Actor, number>;
  /** Further checks of a successful answer. */
  then?: (res: LightMyRequestResponse, actor: Actor, s: Scene) => Promise<void> | void;
}

const statuses = (owner: number, admin: number, member: number, outsider: number, anonymous: number): Record<Actor, number> => ({
  owner,
  admin,
  member,
  outsider,
  anonymous,
});

/** Asserts a status, and the exact body of a 401, 403 or 404. */
function assertAnswer(res: LightMyRequestResponse, expected: number, label: string): void {
  assert.equal(res.statusCode, expected, `${label}: expected ${expected}, got ${res.statusCode} ${res.body}`);
  const refusal = REFUSALS[expected];
  if (refusal) assert.deepEqual(body(res), refusal, `${label}: refusal body`);
}

/** Runs every cell, then fails once naming each cell that disagreed, so one wrong cell hides no other. */
async function cells<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  const failures: string[] = [];
  for (const item of items) {
    try {
      await run(item);
    } catch (err) {
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  if (failures.length > 0) assert.fail(`${failures.length} cell(s) disagree:\n${failures.join('\n')}`);
}

describe('org, member and team access matrix', () => {
  let t: TestApp;
  let root: TestUser;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let main: World;
  let pendingEmail: string;
  let seq = 0;

  const cookie = (u: TestUser): Headers => ({ cookie: u.cookie });
  const call = (headers: Headers, method: Method, url: string, payload?: object) =>
    t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

  /** A call the fixture needs; it must succeed. */
  async function ok<T = Record<string, unknown>>(headers: Headers, method: Method, url: string, payload?: object): Promise<T> {
    const res = await call(headers, method, url, payload);
    assert.ok(res.statusCode === 200 || res.statusCode === 201, `fixture ${method} ${url}: ${res.statusCode} ${res.body}`);
    return body<T>(res);
  }

  const raiseToAgency = (u: TestUser) => setPlan(t.app, root.cookie, u.id, 'agency');
  const addToOrg = (w: World, email: string, role: 'owner' | 'admin' | 'member') =>
    ok(cookie(w.owner), 'POST', `/v1/orgs/${w.org}/members`, { email, role });
  const addToTeam = (w: World, userId: number) => ok(cookie(w.owner), 'POST', `/v1/orgs/${w.org}/teams/${w.team}/members`, { user_id: userId });

  /**
   * An org created by `by` (a fresh agency user when omitted), with `admin` and `member` in their
   * roles and a team holding `member`.
   */
  async function newWorld(by?: TestUser): Promise<World> {
    seq += 1;
    const boss = by ?? (await signUp(t.app, { name: `Boss ${seq}` }));
    const org = await sharedOrg(t.app, {
      by: boss,
      ...(by ? {} : { lift: root }),
      name: `Matrix Org ${seq}`,
      members: [
        { user: admin, role: 'admin' },
        { user: member, role: 'member' },
      ],
      team: { name: `Matrix Team ${seq}`, members: [member] },
    });
    return {
      org: org.slug,
      orgId: org.id,
      team: org.team!,
      owner: boss,
      as: { owner: cookie(boss), admin: cookie(admin), member: cookie(member), outsider: cookie(outsider), anonymous: {} },
    };
  }

  /** The world with `member` as the target: for routes that name no other user. */
  const plain = (w: World): Scene => ({ ...w, target: member.id, targetEmail: member.email });

  /** A registered user who is in no org of the world. */
  async function registered(w: World): Promise<Scene> {
    const u = await register(t.app, { name: 'Target User' });
    return { ...w, target: u.id, targetEmail: u.email };
  }

  /** A fresh plain member of the org, in no team. */
  async function orgMember(w: World): Promise<Scene> {
    const s = await registered(w);
    await addToOrg(w, s.targetEmail, 'member');
    return s;
  }

  /** A fresh plain member of the org who is also in the world's team. */
  async function teamMember(w: World): Promise<Scene> {
    const s = await orgMember(w);
    await addToTeam(w, s.target);
    return s;
  }

  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' }); // first user of a fresh instance: the instance admin
    owner = await signUp(t.app, { name: 'Owner' });
    admin = await signUp(t.app, { name: 'Admin' });
    member = await signUp(t.app, { name: 'Member' });
    outsider = await signUp(t.app, { name: 'Outsider' });
    await raiseToAgency(owner);
    main = await newWorld(owner);
    // One pending invite: an email nobody registered.
    pendingEmail = uniqueEmail('pending');
    const invited = await addToOrg(main, pendingEmail, 'member');
    assert.deepEqual(invited, { invited: true, email: pendingEmail, role: 'member' });
  });
  after(() => t.close());

  const org = (s: Scene) => `/v1/orgs/${s.org}`;
  const team = (s: Scene) => `/v1/orgs/${s.org}/teams/${s.team}`;
  const shared = () => Promise.resolve(plain(main));
  const fresh = async () => plain(await newWorld());

  const ROWS: Row[] = [
    {
      route: 'GET /v1/orgs/:org_slug',
      method: 'GET',
      url: org,
      scene: shared,
      expect: statuses(200, 200, 200, 404, 401),
      then: (res, actor, s) => {
        const b = body(res);
        assert.equal(b.slug, s.org, actor);
        assert.equal(b.role, actor, `${actor}: the answer carries the caller's role`);
      },
    },
    {
      route: 'PATCH /v1/orgs/:org_slug',
      method: 'PATCH',
      url: org,
      body: () => ({ description: 'x' }),
      scene: shared,
      expect: statuses(200, 403, 403, 404, 401),
      then: (res, actor) => assert.equal(body(res).description, 'x', actor),
    },
    {
      route: 'DELETE /v1/orgs/:org_slug',
      method: 'DELETE',
      url: org,
      scene: fresh,
      expect: statuses(200, 403, 403, 404, 401),
      then: async (res, actor, s) => {
        assert.deepEqual(body(res), { id: s.orgId, deleted: true }, actor);
        assertAnswer(await call(s.as.owner, 'GET', org(s)), 404, `${actor}: GET after DELETE, as the owner`);
      },
    },
    {
      route: 'GET /v1/orgs/:org_slug/members',
      method: 'GET',
      url: (s) => `${org(s)}/members`,
      scene: shared,
      expect: statuses(200, 200, 200, 404, 401),
      then: (res, actor) => {
        const b = body<{ members: { user_id: number; role: string }[]; invites: { email: string; role: string }[] }>(res);
        assert.ok(
          b.members.some((m) => m.user_id === member.id && m.role === 'member'),
          `${actor}: members lists the member`,
        );
        if (actor === 'member') assert.deepEqual(b.invites, [], `${actor}: a member sees no invites`);
        else
          assert.ok(
            b.invites.some((i) => i.email === pendingEmail && i.role === 'member'),
            `${actor}: sees the pending invite`,
          );
      },
    },
    {
      route: 'POST /v1/orgs/:org_slug/members',
      method: 'POST',
      url: (s) => `${org(s)}/members`,
      body: (s) => ({ email: s.targetEmail, role: 'member' }),
      scene: () => registered(main),
      expect: statuses(201, 201, 403, 404, 401),
      then: (res, actor, s) => {
        assert.deepEqual(body(res), { user_id: s.target, email: s.targetEmail, name: 'Target User', role: 'member' }, actor);
      },
    },
    {
      route: 'PATCH /v1/orgs/:org_slug/members/:user_id',
      method: 'PATCH',
      url: (s) => `${org(s)}/members/${s.target}`,
      body: () => ({ role: 'admin' }),
      scene: () => orgMember(main),
      expect: statuses(200, 200, 403, 404, 401),
      then: (res, actor, s) => {
        const b = body(res);
        assert.equal(b.user_id, s.target, actor);
        assert.equal(b.role, 'admin', actor);
      },
    },
    {
      route: 'DELETE /v1/orgs/:org_slug/members/:user_id',
      method: 'DELETE',
      url: (s) => `${org(s)}/members/${s.target}`,
      scene: () => orgMember(main),
      expect: statuses(200, 200, 403, 404, 401),
      then: (res, actor, s) => assert.deepEqual(body(res), { user_id: s.target, removed: true }, actor),
    },
    {
      route: 'POST /v1/orgs/:org_slug/teams',
      method: 'POST',
      url: (s) => `${org(s)}/teams`,
      body: () => ({ name: 'Created Team' }),
      // A fresh org per cell: agency allows 5 teams per org.
      scene: fresh,
      expect: statuses(201, 201, 403, 404, 401),
      then: (res, actor) => {
        const b = body(res);
        assert.equal(b.name, 'Created Team', actor);
        assert.equal(b.slug, 'created-team', actor);
      },
    },
    {
      route: 'GET /v1/orgs/:org_slug/teams',
      method: 'GET',
      url: (s) => `${org(s)}/teams`,
      scene: shared,
      expect: statuses(200, 200, 200, 404, 401),
      then: (res, actor, s) => {
        const b = body<{ teams: { slug: string }[] }>(res);
        assert.ok(
          b.teams.some((x) => x.slug === s.team),
          `${actor}: lists the team`,
        );
      },
    },
    {
      route: 'PATCH /v1/orgs/:org_slug/teams/:team_slug',
      method: 'PATCH',
      url: team,
      body: () => ({ description: 'x' }),
      scene: shared,
      expect: statuses(200, 200, 403, 404, 401),
      then: (res, actor) => assert.equal(body(res).description, 'x', actor),
    },
    {
      route: 'DELETE /v1/orgs/:org_slug/teams/:team_slug',
      method: 'DELETE',
      url: team,
      scene: fresh,
      expect: statuses(200, 200, 403, 404, 401),
      then: async (res, actor, s) => {
        assert.equal(body(res).deleted, true, actor);
        assertAnswer(await call(s.as.owner, 'GET', `${team(s)}/members`), 404, `${actor}: the deleted team is gone`);
      },
    },
    {
      route: 'GET /v1/orgs/:org_slug/teams/:team_slug/members',
      method: 'GET',
      url: (s) => `${team(s)}/members`,
      scene: shared,
      expect: statuses(200, 200, 200, 404, 401),
      then: (res, actor) => {
        const b = body<{ members: { user_id: number }[] }>(res);
        assert.ok(
          b.members.some((m) => m.user_id === member.id),
          `${actor}: lists the team member`,
        );
      },
    },
    {
      route: 'POST /v1/orgs/:org_slug/teams/:team_slug/members',
      method: 'POST',
      url: (s) => `${team(s)}/members`,
      body: (s) => ({ user_id: s.target }),
      scene: () => orgMember(main),
      expect: statuses(201, 201, 403, 404, 401),
      then: (res, actor, s) => assert.deepEqual(body(res), { user_id: s.target, name: 'Target User', active: true, locked: false }, actor),
    },
    {
      route: 'PATCH /v1/orgs/:org_slug/teams/:team_slug/members/:user_id',
      method: 'PATCH',
      url: (s) => `${team(s)}/members/${s.target}`,
      body: () => ({ active: false }),
      scene: () => teamMember(main),
      expect: statuses(200, 200, 403, 404, 401),
      then: (res, actor, s) => assert.deepEqual(body(res), { user_id: s.target, name: 'Target User', active: false, locked: false }, actor),
    },
    {
      route: 'DELETE /v1/orgs/:org_slug/teams/:team_slug/members/:user_id',
      method: 'DELETE',
      url: (s) => `${team(s)}/members/${s.target}`,
      scene: () => teamMember(main),
      expect: statuses(200, 200, 403, 404, 401),
      then: (res, actor, s) => assert.deepEqual(body(res), { user_id: s.target, removed: true }, actor),
    },
  ];

  const send = (row: Row, s: Scene, actor: Actor) => call(s.as[actor], row.method, row.url(s), row.body?.(s));

  describe('each route, each actor', () => {
    for (const row of ROWS) {
      test(row.route, () =>
        cells(ACTORS, async (actor) => {
          const s = await row.scene();
          const res = await send(row, s, actor);
          assertAnswer(res, row.expect[actor], `${row.route} as ${actor}`);
          if (res.statusCode < 300 && row.then) await row.then(res, actor, s);
        }),
      );
    }
  });

  describe('special cases', () => {
    /** One call by one actor of a world, with its expected status. */
    async function expectCall(s: Scene, actor: Actor, method: Method, url: string, payload: object | undefined, expected: number, label: string) {
      const res = await call(s.as[actor], method, url, payload);
      assertAnswer(res, expected, label);
      return res;
    }

    test('POST members with role owner: the owner may, an admin may not', async () => {
      const a = await registered(main);
      const res = await expectCall(a, 'owner', 'POST', `${org(a)}/members`, { email: a.targetEmail, role: 'owner' }, 201, 'owner adds an owner');
      assert.equal(body(res).role, 'owner');
      const b = await registered(main);
      await expectCall(b, 'admin', 'POST', `${org(b)}/members`, { email: b.targetEmail, role: 'owner' }, 403, 'admin adds an owner');
    });

    test("PATCH member: an admin may neither change the owner's role nor make an owner", async () => {
      const w = plain(await newWorld());
      await expectCall(w, 'admin', 'PATCH', `${org(w)}/members/${w.owner.id}`, { role: 'member' }, 403, "admin demotes the owner");
      await expectCall(w, 'admin', 'PATCH', `${org(w)}/members/${w.owner.id}`, { role: 'admin' }, 403, "admin changes the owner's role to admin");
      const s = await orgMember(w);
      await expectCall(s, 'admin', 'PATCH', `${org(s)}/members/${s.target}`, { role: 'owner' }, 403, 'admin promotes a member to owner');
      const members = body<{ members: { user_id: number; role: string }[] }>(await call(w.as.owner, 'GET', `${org(w)}/members`)).members;
      assert.equal(members.find((m) => m.user_id === w.owner.id)?.role, 'owner', 'the owner is still owner');
      assert.equal(members.find((m) => m.user_id === s.target)?.role, 'member', 'the target is still a member');
    });

    test('DELETE member: a member may leave', async () => {
      const w = plain(await newWorld());
      const res = await expectCall(w, 'member', 'DELETE', `${org(w)}/members/${member.id}`, undefined, 200, 'member leaves');
      assert.deepEqual(body(res), { user_id: member.id, removed: true });
      assertAnswer(await call(w.as.member, 'GET', org(w)), 404, 'the org is gone for whoever left it');
    });

    test('DELETE member: an admin may not remove the owner', async () => {
      const w = plain(await newWorld());
      await expectCall(w, 'admin', 'DELETE', `${org(w)}/members/${w.owner.id}`, undefined, 403, 'admin removes the owner');
      assert.equal(body(await call(w.as.owner, 'GET', org(w))).role, 'owner', 'the owner is still owner');
    });

    test('DELETE member: the last owner may not leave (409 conflict)', async () => {
      const w = plain(await newWorld());
      const res = await expectCall(w, 'owner', 'DELETE', `${org(w)}/members/${w.owner.id}`, undefined, 409, 'last owner leaves');
      assert.equal(body(res).code, 'conflict');
      assert.equal(body(await call(w.as.owner, 'GET', org(w))).role, 'owner', 'the owner is still owner');
    });

    test('team members: a member may join, deactivate and leave on their own', async () => {
      // Joining: a team the member is not in yet.
      const w = plain(await newWorld());
      const other = await ok<{ slug: string }>(w.as.owner, 'POST', `${org(w)}/teams`, { name: 'Other Team' });
      const joined = await expectCall(w, 'member', 'POST', `/v1/orgs/${w.org}/teams/${other.slug}/members`, { user_id: member.id }, 201, 'member adds themselves');
      assert.equal(body(joined).user_id, member.id);

      const off = await expectCall(w, 'member', 'PATCH', `${team(w)}/members/${member.id}`, { active: false }, 200, 'member deactivates themselves');
      assert.equal(body(off).active, false);

      const left = await expectCall(w, 'member', 'DELETE', `${team(w)}/members/${member.id}`, undefined, 200, 'member leaves the team');
      assert.deepEqual(body(left), { user_id: member.id, removed: true });
    });
  });

  describe('unknown slugs and existence', () => {
    const TEAM_ROWS = ROWS.filter((r) => r.route.includes(':team_slug'));

    test('an unknown org slug answers 404 to every authenticated actor on every route', () =>
      cells(
        ROWS.flatMap((row) => AUTHENTICATED.map((actor) => ({ row, actor }))),
        async ({ row, actor }) => {
          const s: Scene = { ...plain(main), org: UNKNOWN_ORG };
          assertAnswer(await send(row, s, actor), 404, `${row.route} on an unknown org as ${actor}`);
        },
      ));

    test('an unknown team slug answers 404 to org members on every team route', () =>
      cells(
        TEAM_ROWS.flatMap((row) => ORG_MEMBERS.map((actor) => ({ row, actor }))),
        async ({ row, actor }) => {
          const s: Scene = { ...plain(main), team: UNKNOWN_TEAM };
          assertAnswer(await send(row, s, actor), 404, `${row.route} on an unknown team as ${actor}`);
        },
      ));

    test('for the outsider, a real org and an unknown one give byte-identical 404 bodies', () =>
      cells(ROWS, async (row) => {
        const s = await row.scene();
        const real = await send(row, s, 'outsider');
        const unknown = await send(row, { ...s, org: UNKNOWN_ORG }, 'outsider');
        assert.equal(real.statusCode, 404, `${row.route}: real org as outsider`);
        assert.equal(unknown.statusCode, 404, `${row.route}: unknown org as outsider`);
        assert.equal(real.body, unknown.body, `${row.route}: the bodies differ`);
        assert.equal(real.headers['content-length'], unknown.headers['content-length'], `${row.route}: the lengths differ`);
      }));
  });

  describe('both key modes share orgs and teams', () => {
    let testKey: Headers;
    before(async () => {
      testKey = { 'x-api-key': (await createKey(t.app, owner.cookie, 'test')).key };
    });

    test("GET org: the owner's sk_test_ key answers like the owner's cookie", async () => {
      const viaCookie = await call(cookie(owner), 'GET', `/v1/orgs/${main.org}`);
      const viaKey = await call(testKey, 'GET', `/v1/orgs/${main.org}`);
      assert.equal(viaCookie.statusCode, 200);
      assert.equal(viaKey.statusCode, 200);
      assert.deepEqual(body(viaKey), body(viaCookie));
      assert.equal(body(viaKey).role, 'owner');
    });

    test("PATCH org: the owner's sk_test_ key answers like the owner's cookie", async () => {
      const viaCookie = await call(cookie(owner), 'PATCH', `/v1/orgs/${main.org}`, { description: 'x' });
      const viaKey = await call(testKey, 'PATCH', `/v1/orgs/${main.org}`, { description: 'x' });
      assert.equal(viaCookie.statusCode, 200);
      assert.equal(viaKey.statusCode, 200);
      assert.deepEqual(body(viaKey), body(viaCookie));
    });

    test("POST team: the owner's sk_test_ key answers like the owner's cookie", async () => {
      const viaCookie = await call(cookie(owner), 'POST', `/v1/orgs/${main.org}/teams`, { name: 'Via Cookie' });
      const viaKey = await call(testKey, 'POST', `/v1/orgs/${main.org}/teams`, { name: 'Via Key' });
      assert.equal(viaCookie.statusCode, 201, viaCookie.body);
      assert.equal(viaKey.statusCode, 201, viaKey.body);
      const { id: _a, name: _b, slug: _c, created_at: _d, ...cookieRest } = body(viaCookie);
      const { id: _e, name: _f, slug: _g, created_at: _h, ...keyRest } = body(viaKey);
      assert.deepEqual(keyRest, cookieRest);
      assert.equal(body(viaKey).slug, 'via-key');
      // The team made with the test key is visible to the cookie, and the other way round.
      const list = body<{ teams: { slug: string }[] }>(await call(cookie(owner), 'GET', `/v1/orgs/${main.org}/teams`)).teams.map((x) => x.slug);
      assert.ok(list.includes('via-key') && list.includes('via-cookie'), JSON.stringify(list));
      const viaKeyList = body<{ teams: { slug: string }[] }>(await call(testKey, 'GET', `/v1/orgs/${main.org}/teams`)).teams.map((x) => x.slug);
      assert.deepEqual(viaKeyList, list);
    });
  });
});
