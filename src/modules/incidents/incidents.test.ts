import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HOUR, MINUTE } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, setPlan, signUp, type TestUser } from '../../../test/factories.js';

interface Incident {
  Id: number;
  org_id: number;
  livemode: boolean;
  title: string;
  status: string;
  priority: string;
  sla_due_at: string;
  sla_status: string;
  sla_breached: boolean;
  customer_token: string;
  customer_status_url: string;
  assignee_id: number | null;
  created_at: string;
  resolved_at: string | null;
}

describe('incidents', () => {
  let t: TestApp;
  let root: TestUser;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let ownerTest: Headers;
  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' });
    owner = await signUp(t.app, { name: 'Owner' });
    member = await signUp(t.app, { name: 'Member' });
    stranger = await signUp(t.app, { name: 'Stranger' });
    await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: member.email } });
    ownerTest = { 'x-api-key': (await createKey(t.app, owner.cookie, 'test')).key };
  });
  after(() => t.close());

  const as = (u: TestUser): Headers => ({ cookie: u.cookie });
  const req = (headers: Headers, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  async function create(headers: Headers, payload: object = {}, base = '/v1/tickets'): Promise<Incident> {
    const res = await req(headers, 'POST', base, { title: 'Gas smell reported', ...payload });
    assert.equal(res.statusCode, 201, res.body);
    return body<Incident>(res);
  }

  describe('create', () => {
    test('answers 201 with the incident, its SLA and its status page link', async () => {
      const i = await create(as(owner), { description: 'Near the school', lat: 48.85, lng: 2.35, location_name: 'Rue X', source: 'webhook', source_ref: 'ext-1' });
      assert.equal(i.title, 'Gas smell reported');
      assert.equal(i.status, 'open');
      assert.equal(i.priority, 'normal');
      assert.equal(i.livemode, true);
      assert.equal(i.sla_status, 'ok');
      assert.equal(i.sla_breached, false);
      assert.equal(Date.parse(i.sla_due_at) - Date.parse(i.created_at), 24 * HOUR);
      assert.match(i.customer_token, /^[A-Za-z0-9_-]{32}$/);
      assert.equal(i.customer_status_url, `http://muster.test/incidents/status/${i.customer_token}`);
      const orgs = body<{ orgs: { id: number; primary: boolean }[] }>(await req(as(owner), 'GET', '/v1/orgs')).orgs;
      assert.equal(i.org_id, orgs.find((o) => o.primary)!.id, 'the primary org by default');
      assert.deepEqual([(i as unknown as Record<string, unknown>).source, (i as unknown as Record<string, unknown>).lat], ['webhook', 48.85]);
    });

    test('both paths address the same records with the same bodies', async () => {
      const a = await create(as(owner), {}, '/v1/incidents');
      const viaTickets = await req(as(owner), 'GET', `/v1/tickets/${a.Id}`);
      const viaIncidents = await req(as(owner), 'GET', `/v1/incidents/${a.Id}`);
      assert.equal(viaTickets.statusCode, 200);
      assert.equal(viaTickets.body, viaIncidents.body);
      assert.equal(body<Incident>(viaTickets).Id, a.Id);
    });

    test('validates the body', async () => {
      for (const [payload, field] of [
        [{}, 'title'],
        [{ title: '   ' }, 'title'],
        [{ title: 'x', priority: 'critical' }, 'priority'],
        [{ title: 'x', source: 'fax' }, 'source'],
        [{ title: 'x', lat: 90.5 }, 'lat'],
        [{ title: 'x', lng: -180.1 }, 'lng'],
        [{ title: 'x'.repeat(201) }, 'title'],
        [{ title: 'x', org_id: 0 }, 'org_id'],
      ] as const) {
        const res = await req(as(owner), 'POST', '/v1/tickets', payload);
        assert.equal(res.statusCode, 422, JSON.stringify(payload));
        assert.equal(body<{ details: { field: string }[] }>(res).details[0]!.field, field);
      }
    });

    test('an org the caller does not belong to is 403', async () => {
      const strangerOrg = body<{ orgs: { id: number }[] }>(await req(as(stranger), 'GET', '/v1/orgs')).orgs[0]!.id;
      const res = await req(as(owner), 'POST', '/v1/tickets', { title: 'x', org_id: strangerOrg });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(body(res), { error: 'Forbidden', code: 'forbidden' });
      assert.equal((await req(as(owner), 'POST', '/v1/tickets', { title: 'x', org_id: 999_999 })).statusCode, 403);
    });

    test("queues a push to the creator's browsers and a phone alert, which is skipped without a phone", async () => {
      const i = await create(as(owner));
      const rows = await t.ctx.db.selectFrom('outbox').selectAll().where('topic', '=', 'incident.created').where('org_id', '=', i.org_id).orderBy('id', 'desc').limit(2).execute();
      const byKind = Object.fromEntries(rows.map((r) => [r.kind, r]));
      assert.equal(byKind.push?.status, 'pending');
      assert.equal(byKind.push?.recipient, `user:${owner.id}`);
      assert.equal(byKind.phone?.status, 'skipped');
      await req(as(owner), 'PATCH', '/v1/auth/me', { phone: '+14155550123' });
      await create(as(owner));
      const phone = await t.ctx.db.selectFrom('outbox').selectAll().where('kind', '=', 'phone').orderBy('id', 'desc').executeTakeFirstOrThrow();
      assert.equal(phone.status, 'pending');
      assert.equal(phone.recipient, '+14155550123');
    });

    test('in test mode the push and phone alert are recorded as suppressed', async () => {
      const i = await create(ownerTest);
      assert.equal(i.livemode, false);
      const rows = await t.ctx.db.selectFrom('outbox').select(['kind', 'status', 'livemode']).where('topic', '=', 'incident.created').orderBy('id', 'desc').limit(2).execute();
      assert.deepEqual(rows.map((r) => [r.status, r.livemode]), [['suppressed', 0], ['suppressed', 0]]);
    });
  });

  describe('list', () => {
    let lister: TestUser;
    before(async () => {
      lister = await signUp(t.app, { name: 'Lister' });
      const specs = [
        ['low', 'open'],
        ['urgent', 'open'],
        ['high', 'resolved'],
        ['normal', 'in_progress'],
        ['urgent', 'closed'],
      ] as const;
      for (const [priority, status] of specs) {
        const i = await create(as(lister), { priority, title: `${priority}/${status}` });
        if (status !== 'open') await req(as(lister), 'PATCH', `/v1/tickets/${i.Id}`, { status });
      }
    });

    test('newest first with total, page and limit (default 50)', async () => {
      const res = body<{ tickets: Incident[]; total: number; page: number; limit: number }>(await req(as(lister), 'GET', '/v1/tickets'));
      assert.equal(res.total, 5);
      assert.equal(res.page, 1);
      assert.equal(res.limit, 50);
      assert.deepEqual(res.tickets.map((i) => i.title), ['urgent/closed', 'normal/in_progress', 'high/resolved', 'urgent/open', 'low/open']);
    });

    test('pages: limit 2 gives pages of 2, 2, 1, then empty with the same total', async () => {
      const page = async (n: number) => body<{ tickets: Incident[]; total: number }>(await req(as(lister), 'GET', `/v1/incidents?limit=2&page=${n}`));
      assert.deepEqual([(await page(1)).tickets.length, (await page(2)).tickets.length, (await page(3)).tickets.length, (await page(4)).tickets.length], [2, 2, 1, 0]);
      assert.equal((await page(4)).total, 5);
      assert.equal((await page(3)).tickets[0]!.title, 'low/open');
    });

    test('filters by status and by priority, with matching totals', async () => {
      const q = async (s: string) => body<{ tickets: Incident[]; total: number }>(await req(as(lister), 'GET', `/v1/tickets?${s}`));
      const open = await q('status=open');
      assert.deepEqual(open.tickets.map((i) => i.title), ['urgent/open', 'low/open']);
      assert.equal(open.total, 2);
      const urgent = await q('priority=urgent');
      assert.equal(urgent.total, 2);
      const both = await q('priority=urgent&status=closed');
      assert.deepEqual([both.total, both.tickets[0]!.title], [1, 'urgent/closed']);
    });

    test('limit is 1..200 and page from 1; a bad filter value is 422', async () => {
      for (const q of ['limit=0', 'limit=201', 'page=0', 'page=-1', 'limit=x', 'status=done', 'priority=p1']) {
        assert.equal((await req(as(lister), 'GET', `/v1/tickets?${q}`)).statusCode, 422, q);
      }
      assert.equal((await req(as(lister), 'GET', '/v1/tickets?limit=200')).statusCode, 200);
      assert.equal((await req(as(lister), 'GET', '/v1/tickets?limit=1')).statusCode, 200);
    });

    test('org_id narrows the list to one of the caller orgs; another org is 403', async () => {
      const mine = body<{ orgs: { id: number }[] }>(await req(as(lister), 'GET', '/v1/orgs')).orgs[0]!.id;
      assert.equal(body<{ total: number }>(await req(as(lister), 'GET', `/v1/tickets?org_id=${mine}`)).total, 5);
      assert.equal((await req(as(stranger), 'GET', `/v1/tickets?org_id=${mine}`)).statusCode, 403);
    });

    test("another org's and the other mode's incidents are not listed", async () => {
      assert.equal(body<{ total: number }>(await req(as(stranger), 'GET', '/v1/tickets')).total, 0);
      const listerTest = { 'x-api-key': (await createKey(t.app, lister.cookie, 'test')).key };
      assert.equal(body<{ total: number }>(await req(listerTest, 'GET', '/v1/tickets')).total, 0);
      await create(listerTest, { title: 'test only' });
      const testList = body<{ tickets: Incident[]; total: number }>(await req(listerTest, 'GET', '/v1/tickets'));
      assert.deepEqual([testList.total, testList.tickets[0]!.title], [1, 'test only']);
      assert.equal(body<{ total: number }>(await req(as(lister), 'GET', '/v1/tickets')).total, 5);
    });
  });

  describe('isolation', () => {
    test('an incident of another org answers 404 on every route, as does one of the other mode', async () => {
      const live = await create(as(owner));
      const test = await create(ownerTest);
      const ownerLive = { 'x-api-key': (await createKey(t.app, owner.cookie, 'live')).key };
      const cases: [Headers, Incident][] = [
        [as(stranger), live],
        [ownerTest, live],
        [as(owner), test],
        [ownerLive, test],
      ];
      for (const [headers, i] of cases) {
        for (const [method, url, payload] of [
          ['GET', `/v1/tickets/${i.Id}`],
          ['GET', `/v1/incidents/${i.Id}`],
          ['PATCH', `/v1/tickets/${i.Id}`, { status: 'closed' }],
          ['DELETE', `/v1/tickets/${i.Id}`],
          ['GET', `/v1/incidents/${i.Id}/replies`],
          ['POST', `/v1/incidents/${i.Id}/replies`, { body: 'x' }],
        ] as const) {
          const res = await req(headers, method, url, payload);
          assert.equal(res.statusCode, 404, `${method} ${url}`);
          assert.deepEqual(body(res), { error: 'Not found', code: 'not_found' });
        }
      }
      assert.equal(body<Incident>(await req(as(owner), 'GET', `/v1/tickets/${live.Id}`)).status, 'open', 'nothing changed');
    });

    test('every incident route needs a credential', async () => {
      for (const [method, url] of [
        ['GET', '/v1/tickets'],
        ['POST', '/v1/tickets'],
        ['GET', '/v1/incidents/1'],
        ['PATCH', '/v1/incidents/1'],
        ['DELETE', '/v1/tickets/1'],
        ['GET', '/v1/tickets/1/replies'],
        ['POST', '/v1/tickets/1/replies'],
        ['GET', '/v1/incidents/stream'],
      ] as const) {
        assert.equal((await t.app.inject({ method, url })).statusCode, 401, `${method} ${url}`);
      }
    });

    test('a locked org refuses new incidents with 403 resource_locked', async () => {
      const boss = await signUp(t.app, { name: 'Boss' });
      await setPlan(t.app, root.cookie, boss.id, 'agency');
      const org = body<{ id: number }>(await req(as(boss), 'POST', '/v1/orgs', { name: 'Locked Co' }));
      await setPlan(t.app, root.cookie, boss.id, 'free');
      const res = await req(as(boss), 'POST', '/v1/tickets', { title: 'x', org_id: org.id });
      assert.equal(res.statusCode, 403);
      assert.equal(body(res).code, 'resource_locked');
    });
  });

  describe('update', () => {
    test('changes status; resolving freezes the SLA at met, reopening thaws it', async () => {
      const i = await create(as(owner), { priority: 'high' });
      const resolved = body<Incident>(await req(as(owner), 'PATCH', `/v1/tickets/${i.Id}`, { status: 'resolved' }));
      assert.equal(resolved.status, 'resolved');
      assert.equal(resolved.sla_status, 'met');
      assert.equal(resolved.resolved_at, resolved.created_at);
      t.clock.advance(10 * HOUR);
      assert.equal(body<Incident>(await req(as(owner), 'GET', `/v1/tickets/${i.Id}`)).sla_status, 'met', 'frozen');
      const reopened = body<Incident>(await req(as(owner), 'PATCH', `/v1/tickets/${i.Id}`, { status: 'open' }));
      assert.deepEqual([reopened.sla_status, reopened.sla_breached, reopened.resolved_at], ['breached', true, null]);
      const closedLate = body<Incident>(await req(as(owner), 'PATCH', `/v1/tickets/${i.Id}`, { status: 'closed' }));
      assert.deepEqual([closedLate.sla_status, closedLate.sla_breached], ['breached', true]);
      t.clock.advance(-10 * HOUR);
    });

    test('a priority change recomputes the due time from creation', async () => {
      const i = await create(as(owner), { priority: 'low' });
      t.clock.advance(30 * MINUTE);
      const urgent = body<Incident>(await req(as(owner), 'PATCH', `/v1/incidents/${i.Id}`, { priority: 'urgent' }));
      assert.equal(Date.parse(urgent.sla_due_at) - Date.parse(i.created_at), HOUR);
      assert.equal(urgent.sla_status, 'ok');
      t.clock.advance(15 * MINUTE);
      assert.equal(body<Incident>(await req(as(owner), 'GET', `/v1/incidents/${i.Id}`)).sla_status, 'warning');
      t.clock.advance(15 * MINUTE + 1);
      const late = body<Incident>(await req(as(owner), 'GET', `/v1/incidents/${i.Id}`));
      assert.deepEqual([late.sla_status, late.sla_breached], ['breached', true]);
      t.clock.advance(-(60 * MINUTE + 1));
    });

    test('the assignee must be a member of the org; null unassigns', async () => {
      const i = await create(as(owner));
      const ok = await req(as(owner), 'PATCH', `/v1/tickets/${i.Id}`, { assignee_id: member.id });
      assert.equal(body<Incident>(ok).assignee_id, member.id);
      const bad = await req(as(owner), 'PATCH', `/v1/tickets/${i.Id}`, { assignee_id: stranger.id });
      assert.equal(bad.statusCode, 422);
      assert.deepEqual(body(bad).details, [{ field: 'assignee_id', message: 'is not a member of this org' }]);
      assert.equal(body<Incident>(await req(as(owner), 'PATCH', `/v1/tickets/${i.Id}`, { assignee_id: null })).assignee_id, null);
    });

    test('validates the patch', async () => {
      const i = await create(as(owner));
      for (const payload of [{}, { status: 'done' }, { priority: 'p0' }, { assignee_id: 'me' }]) {
        assert.equal((await req(as(owner), 'PATCH', `/v1/tickets/${i.Id}`, payload)).statusCode, 422, JSON.stringify(payload));
      }
      assert.equal((await req(as(owner), 'PATCH', '/v1/tickets/abc', { status: 'open' })).statusCode, 422);
    });
  });

  describe('delete', () => {
    test('org admins and owners delete an incident with its replies; a member may not', async () => {
      const ownerOrg = body<{ orgs: { id: number; slug: string }[] }>(await req(as(owner), 'GET', '/v1/orgs')).orgs.find((o) => o.slug === owner.slug)!.id;
      const i = await create(as(member), { org_id: ownerOrg });
      await req(as(member), 'POST', `/v1/tickets/${i.Id}/replies`, { body: 'first' });
      const refused = await req(as(member), 'DELETE', `/v1/tickets/${i.Id}`);
      assert.equal(refused.statusCode, 403);
      const res = await req(as(owner), 'DELETE', `/v1/incidents/${i.Id}`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(body(res), { Id: i.Id, deleted: true });
      assert.equal((await req(as(owner), 'GET', `/v1/tickets/${i.Id}`)).statusCode, 404);
      assert.equal(await t.ctx.db.selectFrom('replies').select('id').where('incident_id', '=', i.Id).executeTakeFirst(), undefined);
      assert.equal((await req(as(owner), 'GET', `/v1/incidents/status/${i.customer_token}`)).statusCode, 404);
    });
  });

  describe('replies and the status page', () => {
    test('replies are internal by default; the list holds both, oldest first', async () => {
      const i = await create(as(owner));
      const internal = await req(as(member), 'POST', `/v1/incidents/${i.Id}/replies`, { body: 'Valve 7 is stuck' });
      assert.equal(internal.statusCode, 201);
      assert.deepEqual({ ...body<Record<string, unknown>>(internal), id: 0, created_at: '' }, { id: 0, incident_id: i.Id, body: 'Valve 7 is stuck', public: false, author_id: member.id, author_name: 'Member', created_at: '' });
      await req(as(owner), 'POST', `/v1/tickets/${i.Id}/replies`, { body: 'A crew is on the way', public: true });
      const list = body<{ replies: { body: string; public: boolean }[] }>(await req(as(owner), 'GET', `/v1/tickets/${i.Id}/replies`)).replies;
      assert.deepEqual(list.map((r) => [r.body, r.public]), [['Valve 7 is stuck', false], ['A crew is on the way', true]]);
      assert.equal((await req(as(owner), 'POST', `/v1/tickets/${i.Id}/replies`, { body: '' })).statusCode, 422);
    });

    test('the status page shows title, status and public replies only, without a login', async () => {
      const i = await create(as(owner), { title: 'Power outage <Main St>' });
      await req(as(owner), 'POST', `/v1/incidents/${i.Id}/replies`, { body: 'internal: transformer 12 blew' });
      await req(as(owner), 'POST', `/v1/incidents/${i.Id}/replies`, { body: 'Crews are restoring power', public: true });
      await req(as(owner), 'PATCH', `/v1/incidents/${i.Id}`, { status: 'in_progress' });

      const json = await t.app.inject({ url: `/v1/incidents/status/${i.customer_token}` });
      assert.equal(json.statusCode, 200);
      const page = body<{ org_name: string; title: string; status: string; replies: { body: string }[] }>(json);
      assert.equal(page.title, 'Power outage <Main St>');
      // The organization is named, by its name only (issue 33).
      const orgs = body<{ orgs: { id: number; name: string; slug: string }[] }>(await req(as(owner), 'GET', '/v1/orgs')).orgs;
      const org = orgs.find((o) => o.id === (i as unknown as { org_id: number }).org_id)!;
      assert.equal(page.org_name, org.name);
      assert.deepEqual(Object.keys(page).sort(), ['created_at', 'org_name', 'replies', 'status', 'status_changes', 'title', 'updated_at']);
      assert.equal(page.status, 'in_progress');
      assert.deepEqual(page.replies.map((r) => r.body), ['Crews are restoring power']);
      assert.equal(json.body.includes('transformer'), false);
      assert.equal(json.body.includes('priority'), false);
      assert.equal((await t.app.inject({ url: `/v1/tickets/status/${i.customer_token}` })).body, json.body);

      const html = await t.app.inject({ url: `/incidents/status/${i.customer_token}` });
      assert.equal(html.statusCode, 200);
      assert.match(String(html.headers['content-type']), /^text\/html/);
      assert.ok(html.body.includes('Power outage &lt;Main St&gt;'), 'escaped');
      assert.ok(html.body.includes('Crews are restoring power'));
      assert.ok(html.body.includes(`<p class="status-org" id="org" data-testid="status-org">${org.name}</p>`), 'the org named on the page');
      assert.ok(html.body.includes('In progress'));
      assert.equal(html.body.includes('transformer'), false);
      assert.match(html.body, /<meta name="robots" content="noindex/);
      for (const res of [json, html]) {
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers['referrer-policy'], 'no-referrer');
        assert.match(String(res.headers['x-robots-tag']), /noindex/);
      }
    });

    test('an unknown token and a test-mode incident have no status page', async () => {
      const json = await t.app.inject({ url: '/v1/incidents/status/nope' });
      assert.equal(json.statusCode, 404);
      assert.deepEqual(body(json), { error: 'Not found', code: 'not_found' });
      const html = await t.app.inject({ url: '/incidents/status/nope' });
      assert.equal(html.statusCode, 404);
      assert.match(String(html.headers['content-type']), /^text\/html/);
      const testIncident = await create(ownerTest);
      assert.equal((await t.app.inject({ url: `/v1/incidents/status/${testIncident.customer_token}` })).statusCode, 404);
    });
  });
});
