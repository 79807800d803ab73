// Retention (issue #22): per-org settings through PATCH /v1/orgs/:slug (owners), the instance
// default, and the sweeper deleting in batches by the test clock, files included. Both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';
import { createKey, signUp, type TestUser } from '../factories.js';
import { DAY } from '../../src/lib/clock.js';
import { sweepRetention } from '../../src/modules/retention/retention.service.js';
import { exists, fileOf, postSignal, signalIds, upload } from './ops-kit.js';
import { sharedOrg } from '../world.js';

const TOKEN = 'metrics-token-0123456789';

async function metric(t: TestApp, name: string): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  const line = res.body.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('retention settings', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let slug: string;

  before(async () => {
    t = await buildTestApp({ RETENTION_AUDIT_DAYS: '400' });
    owner = await signUp(t.app);
    admin = await signUp(t.app);
    member = await signUp(t.app);
    slug = (await sharedOrg(t.app, { by: owner, lift: owner, members: [{ user: admin, role: 'admin' }, { user: member, role: 'member' }] })).slug;
  });
  after(() => t.close());

  const patch = (u: TestUser, retention: unknown) => t.app.inject({ method: 'PATCH', url: `/v1/orgs/${slug}`, headers: { cookie: u.cookie }, payload: { retention } });
  const get = (u: TestUser) => t.app.inject({ method: 'GET', url: `/v1/orgs/${slug}/retention`, headers: { cookie: u.cookie } });

  test('members read the instance default until the owner sets the org; only the kinds given change; null keeps forever', async () => {
    const first = await get(member);
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), {
      retention: { signals_days: null, audit_days: 400, uploads_days: null, closed_incidents_days: null, inbound_emails_days: null },
      tracks_days: 0,
      instance_default: { signals_days: null, audit_days: 400, uploads_days: null, closed_incidents_days: null, inbound_emails_days: null },
    });
    assert.equal((await patch(owner, { signals_days: 30, uploads_days: 7 })).statusCode, 200);
    assert.equal((await patch(owner, { audit_days: null })).statusCode, 200);
    const now = (await get(admin)).json<{ retention: unknown }>();
    assert.deepEqual(now.retention, { signals_days: 30, audit_days: null, uploads_days: 7, closed_incidents_days: null, inbound_emails_days: null });
  });

  test('admins and members are refused (403); outsiders see nothing (404)', async () => {
    assert.equal((await patch(admin, { signals_days: 1 })).statusCode, 403);
    assert.equal((await patch(member, { signals_days: 1 })).statusCode, 403);
    const outsider = await signUp(t.app);
    assert.equal((await get(outsider)).statusCode, 404);
    assert.equal((await patch(outsider, { signals_days: 1 })).statusCode, 404);
  });

  test('bad values are a 422 naming the field', async () => {
    for (const [retention, field] of [
      [{ signals_days: 0 }, 'retention.signals_days'],
      [{ audit_days: 'forever' }, 'retention.audit_days'],
      [{ uploads_days: 1.5 }, 'retention.uploads_days'],
      [{}, 'retention'],
    ] as const) {
      const res = await patch(owner, retention);
      assert.equal(res.statusCode, 422, JSON.stringify(retention));
      const fields = res.json<{ details: { field: string }[] }>().details.map((d) => d.field);
      assert.ok(fields.some((f) => f.startsWith(field)), `${JSON.stringify(retention)}: ${fields.join(', ')}`);
    }
  });
});

describe('retention sweeper', () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;
  // API keys: sessions end after 14 days of the test clock.
  let h: { 'x-api-key': string };
  let oh: { 'x-api-key': string };

  before(async () => {
    // Batches of 2, so the sweeps below take several transactions each.
    t = await buildTestApp({ METRICS_TOKEN: TOKEN, RETENTION_BATCH: '2', RETENTION_SIGNALS_DAYS: '90' });
    owner = await signUp(t.app);
    other = await signUp(t.app);
    h = { 'x-api-key': (await createKey(t.app, owner.cookie, 'live')).key };
    oh = { 'x-api-key': (await createKey(t.app, other.cookie, 'live')).key };
  });
  after(() => t.close());

  const personalSlug = async (u: TestUser) =>
    (await t.app.inject({ method: 'GET', url: '/v1/orgs', headers: u === owner ? h : oh })).json<{ orgs: { slug: string; primary: boolean }[] }>().orgs.find((o) => o.primary)!.slug;

  test('deletes what is older than each window, by the clock, in batches, files included; keeps the rest', async () => {
    const slug = await personalSlug(owner);
    const set = await t.app.inject({
      method: 'PATCH',
      url: `/v1/orgs/${slug}`,
      headers: h,
      payload: { retention: { signals_days: 30, uploads_days: 10, audit_days: 60, closed_incidents_days: 20 } },
    });
    assert.equal(set.statusCode, 200, set.body);

    // Day 0: five notes, a capture, a beacon (its beacon_on audit entry), a closed incident, an open one.
    const old: number[] = [];
    for (let i = 0; i < 5; i++) old.push((await postSignal(t.app, h, { type: 'note', note: `old ${i}` })).Id!);
    const oldImage = await upload(t.app, h);
    const oldCapture = (await postSignal(t.app, h, { type: 'capture', image_url: oldImage, lat: 1, lng: 2 })).Id!;
    await postSignal(t.app, h, { type: 'beacon', lat: 1, lng: 2, meta: { device_id: 'dev-aaaaaa-00000001' } });
    const closed = (await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: h, payload: { title: 'closed long ago' } })).json<{ Id: number }>().Id;
    assert.equal((await t.app.inject({ method: 'PATCH', url: `/v1/tickets/${closed}`, headers: h, payload: { status: 'closed' } })).statusCode, 200);
    const open = (await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: h, payload: { title: 'still open' } })).json<{ Id: number }>().Id;
    // The other user's personal org follows the instance default (90 days).
    const othersNote = (await postSignal(t.app, oh, { type: 'note', note: 'kept 90 days' })).Id!;

    // Day 15: a capture whose photo is younger than 10 days at the sweep.
    t.clock.advance(15 * DAY);
    const youngImage = await upload(t.app, h);
    const youngCapture = (await postSignal(t.app, h, { type: 'capture', image_url: youngImage })).Id!;

    // Day 21: uploads_days (10) has passed for the first capture only; closed incidents (20) too.
    t.clock.advance(6 * DAY);
    const before21 = await metric(t, 'muster_retention_deleted_total{kind="closed_incidents"}');
    let counts = await sweepRetention(t.ctx);
    assert.equal(counts.signals, 0);
    assert.equal(counts.closed_incidents, 1);
    assert.equal(counts.uploads, 1, 'the old photo goes; its capture stays');
    assert.equal(exists(fileOf(t, oldImage)), false);
    assert.equal(exists(fileOf(t, youngImage)), true);
    const capture = (await t.app.inject({ method: 'GET', url: '/v1/signals?type=capture', headers: h })).json<{ signals: { Id: number; image_url: string | null }[] }>().signals;
    assert.equal(capture.find((s) => s.Id === oldCapture)?.image_url, null);
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/tickets/${closed}`, headers: h })).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/tickets/${open}`, headers: h })).statusCode, 200);
    assert.equal(await metric(t, 'muster_retention_deleted_total{kind="closed_incidents"}'), before21 + 1);
    const list = (await t.app.inject({ method: 'GET', url: '/v1/tickets', headers: h })).json<{ total: number; tickets: unknown[] }>();
    assert.equal(list.total, 1, 'the counters follow the deletion');

    // Day 31: signals of day 0 are past 30 days (in batches of 2); day 15's stay.
    t.clock.advance(10 * DAY);
    counts = await sweepRetention(t.ctx);
    assert.equal(counts.signals, 6);
    assert.equal(counts.uploads, 1, "day 15's photo is past 10 days now");
    assert.equal(exists(fileOf(t, youngImage)), false);
    const left = await signalIds(t.app, h);
    for (const id of [...old, oldCapture]) assert.ok(!left.includes(id), `signal ${id} deleted`);
    assert.ok(left.includes(youngCapture));
    assert.ok((await signalIds(t.app, oh)).includes(othersNote), 'the instance default (90 days) keeps it');
    assert.equal(await metric(t, 'muster_retention_deleted_total{kind="signals"}'), 6);

    // Day 61: the beacon_on audit entry of day 0 goes.
    t.clock.advance(30 * DAY);
    counts = await sweepRetention(t.ctx);
    assert.equal(counts.audit, 1);

    // Day 91: the instance default removes the other user's note; a second sweep finds nothing.
    t.clock.advance(30 * DAY);
    counts = await sweepRetention(t.ctx);
    assert.ok(counts.signals >= 1);
    assert.ok(!(await signalIds(t.app, oh)).includes(othersNote));
    assert.deepEqual(await sweepRetention(t.ctx), { signals: 0, uploads: 0, audit: 0, closed_incidents: 0, inbound_emails: 0, tracks: 0, integration_events: 0 });
  });

  test('null keeps forever, overriding the instance default', async () => {
    const h = oh;
    const slug = await personalSlug(other);
    assert.equal((await t.app.inject({ method: 'PATCH', url: `/v1/orgs/${slug}`, headers: h, payload: { retention: { signals_days: null } } })).statusCode, 200);
    const id = (await postSignal(t.app, h, { type: 'note', note: 'forever' })).Id!;
    t.clock.advance(1000 * DAY);
    await sweepRetention(t.ctx);
    assert.ok((await signalIds(t.app, h)).includes(id));
  });
});
