import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { iso } from '../../lib/clock.js';
import type { TimelineType } from '../../db/schema.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { signUp, type TestUser } from '../../../test/factories.js';
import { sharedOrg } from '../../../test/world.js';
import { writeAudit } from '../signals/index.js';

interface Visit {
  arrived_at: string | null;
  departed_at: string | null;
  duration_seconds: number | null;
}
interface Report {
  sites: { user_id: number; user_name: string; site_id: number; site_name: string; device_id: string; visits: Visit[]; total_seconds: number }[];
  incidents: { incident_id: number; title: string; user_id: number; user_name: string; visits: Visit[]; total_seconds: number }[];
}

describe('GET /v1/orgs/:org_slug/reports/visits: per person and site, and per incident, from the stored events', () => {
  let t: TestApp;
  let owner: TestUser, admin: TestUser, crew: TestUser, outsider: TestUser;
  let org: { id: number; slug: string };
  let incidentId: number;
  let base = 0;
  const at = (minutes: number) => iso(new Date(base + minutes * 60_000));

  before(async () => {
    t = await buildTestApp();
    const root = await signUp(t.app, { name: 'Root' });
    owner = await signUp(t.app, { name: 'Olga Owner' });
    admin = await signUp(t.app, { name: 'Adam Admin' });
    crew = await signUp(t.app, { name: 'Cleo, "Crew"' });
    outsider = await signUp(t.app, { name: 'Otto Outsider' });
    org = await sharedOrg(t.app, { by: owner, lift: root, name: 'Visit Ops', members: [{ user: admin, role: 'admin' }, { user: crew, role: 'member' }] });
    base = Math.floor(t.clock.now().getTime() / 60_000) * 60_000 - 600 * 60_000;

    const site = (action: 'site.enter' | 'site.exit', minutes: number, siteId: number, siteName: string) =>
      writeAudit(t.ctx.db, {
        org_id: org.id,
        livemode: 1,
        action,
        user_id: crew.id,
        device_id: 'cleo-phone',
        meta: JSON.stringify({ site_id: siteId, site_name: siteName, device_id: 'cleo-phone', lat: 51.5, lng: -0.12 }),
        created_at: at(minutes),
      });
    await site('site.enter', 0, 7, 'Depot North');
    await site('site.exit', 45, 7, 'Depot North');
    await site('site.enter', 60, 9, '=Yard');
    await site('site.exit', 90, 9, '=Yard');
    await site('site.enter', 120, 7, 'Depot North'); // still there

    const res = await t.app.inject({ method: 'POST', url: '/v1/incidents', headers: { cookie: owner.cookie }, payload: { title: 'Burst main', org_id: org.id } });
    assert.equal(res.statusCode, 201, res.body);
    incidentId = body<{ Id: number }>(res).Id;
    const event = (type: string, minutes: number) =>
      t.ctx.db
        .insertInto('incident_events')
        .values({ incident_id: incidentId, org_id: org.id, livemode: 1, type: type as TimelineType, actor_id: null, data: JSON.stringify({ user_id: crew.id, device_id: 'cleo-phone' }), created_at: at(minutes) })
        .execute();
    await event('on_scene', 200);
    await event('departed', 230);
  });
  after(() => t.close());

  const report = (u: TestUser, accept = 'application/json', query = `?from=${at(-10)}&to=${at(300)}`) =>
    t.app.inject({ url: `/v1/orgs/${org.slug}/reports/visits${query}`, headers: { cookie: u.cookie, accept } });

  test('JSON: each visit with arrival, departure and duration, per person and site and per incident', async () => {
    const res = await report(admin);
    assert.equal(res.statusCode, 200, res.body);
    const r = body<Report>(res);
    const depot = r.sites.find((s) => s.site_id === 7)!;
    assert.equal(depot.user_id, crew.id);
    assert.equal(depot.site_name, 'Depot North');
    assert.deepEqual(depot.visits, [
      { arrived_at: at(0), departed_at: at(45), duration_seconds: 45 * 60 },
      { arrived_at: at(120), departed_at: null, duration_seconds: null },
    ]);
    assert.equal(depot.total_seconds, 45 * 60);
    assert.deepEqual(r.sites.find((s) => s.site_id === 9)!.visits, [{ arrived_at: at(60), departed_at: at(90), duration_seconds: 30 * 60 }]);
    assert.equal(r.incidents.length, 1);
    assert.deepEqual(
      { ...r.incidents[0]! },
      {
        incident_id: incidentId,
        title: 'Burst main',
        user_id: crew.id,
        user_name: 'Cleo, "Crew"',
        visits: [{ arrived_at: at(200), departed_at: at(230), duration_seconds: 30 * 60 }],
        total_seconds: 30 * 60,
      },
    );
  });

  test('a range leaves out what is outside it: a departure without its arrival keeps arrival null', async () => {
    const r = body<Report>(await report(owner, 'application/json', `?from=${at(30)}&to=${at(100)}`));
    assert.deepEqual(r.sites.find((s) => s.site_id === 7)!.visits, [{ arrived_at: null, departed_at: at(45), duration_seconds: null }]);
    assert.deepEqual(r.incidents, []);
  });

  test('CSV with Accept: text/csv: one row per visit, quoted and formula-safe', async () => {
    const res = await report(owner, 'text/csv');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    const lines = res.body.trimEnd().split('\r\n');
    assert.equal(lines[0], 'kind,user_id,user_name,device_id,site_id,site_name,incident_id,incident_title,arrived_at,departed_at,duration_seconds');
    assert.equal(lines.length, 1 + 3 + 1);
    assert.ok(lines.includes(`site,${crew.id},"Cleo, ""Crew""",cleo-phone,7,Depot North,,,${at(0)},${at(45)},2700`), res.body);
    assert.ok(lines.includes(`site,${crew.id},"Cleo, ""Crew""",cleo-phone,9,'=Yard,,,${at(60)},${at(90)},1800`), res.body);
    assert.ok(lines.includes(`incident,${crew.id},"Cleo, ""Crew""",,,,${incidentId},Burst main,${at(200)},${at(230)},1800`), res.body);
  });

  test('admins and owners only: a member 403, another org 404; a range over 92 days 422 on `to`', async () => {
    assert.equal((await report(crew)).statusCode, 403);
    assert.equal((await report(outsider)).statusCode, 404);
    const res = await report(owner, 'application/json', `?from=${at(0)}&to=${at(93 * 24 * 60)}`);
    assert.equal(res.statusCode, 422);
    assert.equal(body<{ details: { field: string }[] }>(res).details[0]!.field, 'to');
  });
});
