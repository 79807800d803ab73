import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../app.js';
import { buildTestApp, secondInstance, testDialect, type TestApp } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';

/**
 * Issue #14 item 2: concurrent creations by one key deadlocked on PostgreSQL. Each creation's
 * foreign keys take a KEY SHARE lock on the creator's `users` row, then the `incident_counts`
 * upsert locks its counter row, then the phone cap locked the user row FOR UPDATE: two
 * creations each held what the other waited for.
 */
/** Polls until `ok` holds (at most ~5 s). */
async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), 'condition not reached');
}

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

  test('concurrent creations each get their own id, status token, created event and deliveries', async () => {
    const { key } = await createKey(t.app, owner.cookie, 'live');
    const org = await orgId();
    const before = await count(org);
    const broadcast: { incident_id: number; actor: unknown }[] = [];
    const unsubscribe = t.ctx.events.bus.subscribe((e) => {
      const p = e.payload as { type?: string; incident_id: number; actor: unknown };
      if (e.type === 'incident.timeline' && p.type === 'created') broadcast.push(p);
    });
    const answers = await Promise.all(Array.from({ length: 40 }, () => post(key)));
    assert.deepEqual(answers.map((r) => r.statusCode), Array(40).fill(201), answers.find((r) => r.statusCode !== 201)?.body);
    const made = answers.map((r) => r.json<{ Id: number; customer_token: string }>());
    const ids = made.map((i) => i.Id);
    assert.equal(new Set(ids).size, 40, 'unique ids');
    assert.equal(new Set(made.map((i) => i.customer_token)).size, 40, 'unique status tokens');
    assert.equal(await count(org), before + 40, 'the counter saw every creation');
    // One `created` event each, naming its actor (the creation writes it without reading it back).
    const events = await t.ctx.db.selectFrom('incident_events').select(['incident_id', 'actor_id']).where('type', '=', 'created').where('incident_id', 'in', ids).execute();
    assert.deepEqual(events.map((e) => e.incident_id).sort((a, b) => a - b), [...ids].sort((a, b) => a - b));
    for (const id of ids.slice(0, 3)) {
      const res = await t.app.inject({ url: `/v1/tickets/${id}/timeline`, headers: { cookie: owner.cookie } });
      assert.equal(res.statusCode, 200, res.body);
      const created = res.json<{ events: { type: string; actor: { user_id: number; user_name: string } | null }[] }>().events.find((e) => e.type === 'created');
      assert.deepEqual(created?.actor, { user_id: owner.id, user_name: 'Owner' });
    }
    // The broadcast `incident.timeline` events name the actor as the stored ones do.
    await waitFor(() => ids.every((id) => broadcast.some((b) => b.incident_id === id)));
    unsubscribe();
    for (const b of broadcast.filter((x) => ids.includes(x.incident_id))) assert.deepEqual(b.actor, { user_id: owner.id, user_name: 'Owner' });
    // A push and a phone alert each, queued together.
    const rows = await t.ctx.db
      .selectFrom('outbox')
      .select(['kind', 'payload'])
      .where('topic', '=', 'incident.created')
      .where('user_id', '=', owner.id)
      .execute();
    for (const kind of ['push', 'phone'] as const) {
      const per = rows.filter((r) => r.kind === kind).map((r) => (JSON.parse(r.payload) as { incident_id: number }).incident_id);
      for (const id of ids) assert.equal(per.filter((x) => x === id).length, 1, `one ${kind} delivery for incident ${id}`);
    }
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

  // Issue #40: on PostgreSQL a transaction's counter moves are written last, in key order; a resolve
  // (open -1, resolved +1) and a reopen (resolved -1, open +1) written in code order would take the
  // two rows crosswise and could deadlock. Two instances on PostgreSQL (one on SQLite, by design).
  test('creations, resolves and reopens at once on two instances: every answer 2xx and the counters exact', async () => {
    const other = await secondInstance(t);
    const app2 = testDialect === 'postgres' ? await buildApp(other.ctx) : t.app;
    try {
      const { key } = await createKey(t.app, owner.cookie, 'live');
      const org = await orgId();
      const ids = [];
      for (let i = 0; i < 40; i++) ids.push((await post(key)).json<{ Id: number }>().Id);
      const patch = (app: typeof t.app, id: number, status: string) =>
        app.inject({ method: 'PATCH', url: `/v1/tickets/${id}`, headers: { 'x-api-key': key }, payload: { status } });
      for (const id of ids.slice(20)) assert.equal((await patch(t.app, id, 'resolved')).statusCode, 200);
      const answers = await Promise.all([
        ...ids.slice(0, 20).map((id, i) => patch(i % 2 ? app2 : t.app, id, 'resolved')),
        ...ids.slice(20).map((id, i) => patch(i % 2 ? t.app : app2, id, 'open')),
        ...Array.from({ length: 20 }, (_, i) => app2.inject({ method: 'POST', url: '/v1/tickets', headers: { 'x-api-key': key }, payload: { title: `Storm ${i}`, priority: 'urgent' } })),
      ]);
      assert.deepEqual(answers.filter((r) => r.statusCode >= 300).map((r) => r.body), []);
      const counted = await t.ctx.db.selectFrom('incident_counts').select(['status', 'priority', 'n']).where('org_id', '=', org).where('livemode', '=', 1).execute();
      const actual = await t.ctx.db
        .selectFrom('incidents')
        .select(['status', 'priority', (eb) => eb.fn.countAll<number>().as('n')])
        .where('org_id', '=', org)
        .where('livemode', '=', 1)
        .groupBy(['status', 'priority'])
        .execute();
      const norm = (rows: { status: string; priority: string; n: unknown }[]) =>
        rows.filter((r) => Number(r.n) !== 0).map((r) => `${r.status}/${r.priority}=${Number(r.n)}`).sort();
      assert.deepEqual(norm(counted), norm(actual));
    } finally {
      if (app2 !== t.app) await app2.close();
      await other.close();
    }
  });
});
