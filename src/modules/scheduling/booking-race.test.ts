import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { body, buildTestApp, testDialect, type TestApp } from '../../../test/helpers.js';
import { setPlan, signUp, type TestUser } from '../../../test/factories.js';

interface Booking {
  id: string;
  status: string;
  host_id: number;
  event_type_id: number | null;
  start_time: string;
}

const SLOT = '2026-01-07T10:00:00.000Z';

// Under any number of concurrent requests for one slot, exactly one booking per free host gets in.
describe(`concurrent bookings of one slot (${testDialect})`, () => {
  let t: TestApp;
  let root: TestUser;
  before(async () => {
    t = await buildTestApp();
    root = await signUp(t.app, { name: 'Root' });
  });
  after(() => t.close());

  const as = (u: TestUser) => ({ cookie: u.cookie });
  async function post(headers: Record<string, string>, url: string, payload: object) {
    const res = await t.app.inject({ method: 'POST', url, headers, payload });
    assert.equal(res.statusCode, 201, `${url}: ${res.body}`);
    return res;
  }
  const attempt = (url: string, i: number) =>
    t.app.inject({ method: 'POST', url, payload: { attendee_name: `Racer ${i}`, attendee_email: `racer-${i}@example.com`, start_time: SLOT } });
  function tally(results: LightMyRequestResponse[]) {
    const won = results.filter((r) => r.statusCode === 201).map((r) => body<Booking>(r));
    const lost = results.filter((r) => r.statusCode === 409);
    const other = results.filter((r) => r.statusCode !== 201 && r.statusCode !== 409).map((r) => `${r.statusCode} ${r.body}`);
    for (const r of lost) assert.deepEqual(body(r), { error: 'Slot unavailable', code: 'slot_unavailable' });
    return { won, lost: lost.length, other };
  }
  const storedFor = (eventTypeId: number) =>
    t.ctx.db.selectFrom('bookings').select(['id', 'host_id', 'start_time', 'status']).where('event_type_id', '=', eventTypeId).execute();

  test('50 concurrent requests for one personal slot: exactly one 201 and 49 409', async () => {
    const host = await signUp(t.app, { name: 'Solo Host' });
    const et = body<{ id: number }>(await post(as(host), '/v1/event-types', { name: 'Race', slug: 'race', duration_minutes: 30 }));
    // All three public forms, interleaved.
    const paths = [`/v1/book/${host.slug}/race`, `/v1/assign/${host.slug}/race`, `/book/${host.slug}/race`];
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => attempt(paths[i % paths.length]!, i)));
    const { won, lost, other } = tally(results);
    assert.deepEqual(other, []);
    assert.equal(won.length, 1);
    assert.equal(lost, 49);
    assert.deepEqual([won[0]!.host_id, won[0]!.start_time, won[0]!.status], [host.id, SLOT, 'confirmed']);
    const stored = await storedFor(et.id);
    assert.deepEqual(
      stored.map((b) => b.id),
      [won[0]!.id],
    );
    const open = body<{ slots: { start_time: string }[] }>(await t.app.inject({ url: `/v1/slots/${host.slug}/race?date=2026-01-07` })).slots;
    assert.ok(!open.some((s) => s.start_time === SLOT));
  });

  test('a team with two free active members: 10 concurrent requests give two 201 to different hosts and eight 409', async () => {
    const owner = await signUp(t.app, { name: 'Team Owner' });
    await setPlan(t.app, root.cookie, owner.id, 'agency');
    const x = await signUp(t.app, { name: 'Xena' });
    const y = await signUp(t.app, { name: 'Yuri' });
    const org = body<{ slug: string }>(await post(as(owner), '/v1/orgs', { name: 'Race Org' }));
    for (const u of [x, y]) await post(as(owner), `/v1/orgs/${org.slug}/members`, { email: u.email });
    const team = body<{ slug: string }>(await post(as(owner), `/v1/orgs/${org.slug}/teams`, { name: 'Racers', routing: 'round_robin' }));
    // The creator joined the team (issue 33); the two hosts of this race are x and y.
    await t.app.inject({ method: 'DELETE', url: `/v1/orgs/${org.slug}/teams/${team.slug}/members/${owner.id}`, headers: as(owner) });
    for (const u of [x, y]) await post(as(owner), `/v1/orgs/${org.slug}/teams/${team.slug}/members`, { user_id: u.id });
    const et = body<{ id: number }>(await post(as(owner), `/v1/orgs/${org.slug}/teams/${team.slug}/event-types`, { name: 'Team Race', slug: 'team-race', duration_minutes: 30 }));

    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => attempt(`/v1/book/${org.slug}/${team.slug}/team-race`, 100 + i)));
    const { won, lost, other } = tally(results);
    assert.deepEqual(other, []);
    assert.equal(won.length, 2);
    assert.equal(lost, 8);
    assert.deepEqual(won.map((b) => b.host_id).sort((a, b) => a - b), [x.id, y.id].sort((a, b) => a - b));
    const stored = await storedFor(et.id);
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
    assert.deepEqual(
      stored.map((b) => ({ id: b.id, host_id: Number(b.host_id), start_time: b.start_time })).sort(byId),
      won.map((b) => ({ id: b.id, host_id: b.host_id, start_time: SLOT })).sort(byId),
    );
    const open = body<{ slots: { start_time: string }[] }>(await t.app.inject({ url: `/v1/slots/${org.slug}/${team.slug}/team-race?date=2026-01-07` })).slots;
    assert.ok(!open.some((s) => s.start_time === SLOT));
  });
});
