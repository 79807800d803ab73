import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';

/**
 * Issue #14 item 2: concurrent creations by one key deadlocked on PostgreSQL. Each creation's
 * foreign keys take a KEY SHARE lock on the creator's `users` row, then the `incident_counts`
 * upsert locks its counter row, then the phone cap locked the user row FOR UPDATE: two
 * creations each held what the other waited for.
 */
describe('concurrent incident creation', () => {
  let t: TestApp;
  let owner: TestUser;
  let colleagues: TestUser[];
  before(async () => {
    t = await buildTestApp();
    owner = await signUp(t.app, { name: 'Owner' });
    colleagues = [];
    // signUp proves each address, so adding them by email makes them members at once.
    for (let i = 0; i < 9; i++) colleagues.push(await signUp(t.app, { name: `Colleague ${i}` }));
    for (const c of colleagues) {
      const res = await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: c.email } });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json<{ user_id?: number }>().user_id, c.id, 'a verified colleague joins at once');
    }
    // A phone makes every creation reach the phone cap (the path that locked the user row).
    for (const u of [owner, ...colleagues]) {
      const res = await t.app.inject({ method: 'PATCH', url: '/v1/auth/me', headers: { cookie: u.cookie }, payload: { phone: '+15550100' } });
      assert.equal(res.statusCode, 200, res.body);
    }
  });
  after(() => t.close());

  const post = (key: string, orgId?: number) =>
    t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { 'x-api-key': key }, payload: { title: 'Burst pipe', priority: 'urgent', ...(orgId ? { org_id: orgId } : {}) } });

  async function count(orgId: number): Promise<number> {
    const res = await t.app.inject({ url: `/v1/tickets?org_id=${orgId}&limit=1`, headers: { cookie: owner.cookie } });
    return res.json<{ total: number }>().total;
  }

  async function orgId(): Promise<number> {
    const res = await t.app.inject({ url: '/v1/orgs', headers: { cookie: owner.cookie } });
    return res.json<{ orgs: { id: number; primary: boolean }[] }>().orgs.find((o) => o.primary)!.id;
  }

  test('50 concurrent creations by one key all answer 201', async () => {
    const { key } = await createKey(t.app, owner.cookie, 'live');
    const org = await orgId();
    const before = await count(org);
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(key)));
    assert.deepEqual(answers.map((r) => r.statusCode), Array(50).fill(201), answers.find((r) => r.statusCode !== 201)?.body);
    assert.equal(await count(org), before + 50, 'the counter saw every creation');
  });

  test('50 concurrent creations by ten users of one org all answer 201', async () => {
    const org = await orgId();
    const keys = await Promise.all([owner, ...colleagues].map(async (u) => (await createKey(t.app, u.cookie, 'live')).key));
    const before = await count(org);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => post(keys[i % keys.length]!, org)));
    assert.deepEqual(answers.map((r) => r.statusCode), Array(50).fill(201), answers.find((r) => r.statusCode !== 201)?.body);
    assert.equal(await count(org), before + 50);
  });

  test('the daily phone cap still holds under concurrency', async () => {
    const { key } = await createKey(t.app, colleagues[0]!.cookie, 'live');
    await Promise.all(Array.from({ length: 30 }, () => post(key)));
    const sent = await t.ctx.db
      .selectFrom('outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('kind', '=', 'phone')
      .where('user_id', '=', colleagues[0]!.id)
      .where('status', '!=', 'skipped')
      .executeTakeFirstOrThrow();
    assert.equal(Number(sent.n), t.ctx.config.phoneDailyCap);
  });
});
