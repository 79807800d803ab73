import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from './helpers.js';
import { signUp, type TestUser } from './factories.js';

// Issue 14, item 11: list filters and public pages answer what the contract says.
const ALL_WEEK = { timezone: 'UTC', weekly: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '09:00', end: '17:00' })) };

describe('contract defects', () => {
  let t: TestApp;
  let host: TestUser;
  let et: { id: number; slug: string };
  const ids: Record<string, string> = {};
  before(async () => {
    t = await buildTestApp(); // clock: Monday 2026-01-05 12:00 UTC
    host = await signUp(t.app, { name: 'Dana Host' });
    const res = await t.app.inject({ method: 'POST', url: '/v1/event-types', headers: { cookie: host.cookie }, payload: { name: 'Visit', duration_minutes: 30, availability: ALL_WEEK } });
    et = body<{ id: number; slug: string }>(res);
    for (const start of ['2026-01-06T09:00:00.000Z', '2026-01-06T16:30:00.000Z', '2026-01-07T09:00:00.000Z']) {
      const b = await t.app.inject({ method: 'POST', url: `/v1/book/${host.slug}/${et.slug}`, payload: { attendee_name: 'Ann', attendee_email: 'ann@example.com', start_time: start } });
      assert.equal(b.statusCode, 201, b.body);
      ids[start] = (body<{ id: string }>(b)).id;
    }
  });
  after(() => t.close());

  const list = async (query: string) => {
    const res = await t.app.inject({ url: `/v1/bookings?${query}`, headers: { cookie: host.cookie } });
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return (body<{ bookings: { start_time: string }[] }>(res)).bookings.map((b) => b.start_time);
  };

  test('GET /v1/bookings takes days as well as date-times; a day as `to` includes all of it', async () => {
    assert.equal((await list('from=2026-01-01&to=2026-12-31')).length, 3);
    assert.deepEqual(await list('from=2026-01-06&to=2026-01-06'), ['2026-01-06T09:00:00.000Z', '2026-01-06T16:30:00.000Z']);
    assert.deepEqual(await list('from=2026-01-06T12:00:00Z&to=2026-01-07'), ['2026-01-06T16:30:00.000Z', '2026-01-07T09:00:00.000Z']);
    assert.deepEqual(await list('from=2026-01-07T00:00:00%2B01:00'), ['2026-01-07T09:00:00.000Z'], 'an offset is honoured');
    for (const bad of ['from=2026-13-01', 'to=2026-01-32', 'from=yesterday', 'to=2026-1-5']) {
      const res = await t.app.inject({ url: `/v1/bookings?${bad}`, headers: { cookie: host.cookie } });
      assert.equal(res.statusCode, 422, `${bad}: ${res.body}`);
      assert.equal((body<{ details: { field: string }[] }>(res)).details[0]!.field, bad.split('=')[0]);
    }
  });

  test('GET /v1/signals?type=beacon answers 200 with an empty list', async () => {
    await t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: host.cookie }, payload: { type: 'beacon', lat: 1, lng: 2 } });
    await t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: host.cookie }, payload: { type: 'note', note: 'hello' } });
    const res = await t.app.inject({ url: '/v1/signals?type=beacon', headers: { cookie: host.cookie } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res), { signals: [], page: 1, limit: 50, has_more: false });
    const notes = await t.app.inject({ url: '/v1/signals?type=note', headers: { cookie: host.cookie } });
    assert.equal((body<{ signals: unknown[] }>(notes)).signals.length, 1);
    assert.equal((await t.app.inject({ url: '/v1/signals?type=ping', headers: { cookie: host.cookie } })).statusCode, 422);
  });

  const styled404 = (res: { statusCode: number; headers: Record<string, unknown>; body: string }, url: string) => {
    assert.equal(res.statusCode, 404, `${url}: ${res.statusCode}`);
    assert.match(String(res.headers['content-type']), /^text\/html/, url);
    assert.match(res.body, /^<!doctype html>/i, url);
    assert.match(res.body, /<link rel="stylesheet" href="\/pages\.css[^"]*">/, `${url}: styled`);
    assert.match(res.body, /Page not found/, url);
  };

  test('public booking and management pages of unknown users, teams, event types or tokens are a styled 404', async () => {
    const org = body<{ slug: string }>(await t.app.inject({ method: 'POST', url: '/v1/orgs', headers: { cookie: host.cookie }, payload: { name: 'Known Org' } }));
    for (const url of [
      `/assign/nobody-here/${et.slug}`,
      `/book/${host.slug}/no-such-event`,
      `/assign/${org.slug}/no-team/${et.slug}`,
      `/book/no-org/no-team/no-event`,
      '/bookings/manage/not-a-token',
    ]) {
      styled404(await t.app.inject({ url }), url);
    }
    // A page that exists is not a 404 (the shell, or 503 where the front end is not built).
    for (const url of [`/assign/${host.slug}/${et.slug}`, `/book/${host.slug.toUpperCase()}/${et.slug}`]) {
      const res = await t.app.inject({ url });
      assert.ok([200, 503].includes(res.statusCode), `${url}: ${res.statusCode}`);
    }
  });

  test('the status page of an unknown token is a styled 404', async () => {
    styled404(await t.app.inject({ url: '/incidents/status/nope' }), '/incidents/status/nope');
  });
});
