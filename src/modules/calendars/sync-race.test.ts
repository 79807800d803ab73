import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { hostileZoneIcs, vcalendar, vevent } from '../../../test/calendar-fixtures.js';
import { signUp } from '../../../test/factories.js';
import { body, buildTestApp, type TestApp } from '../../../test/helpers.js';
import { startReceiver, type Receiver } from '../../../test/peers.js';
import { syncConnection } from './sync.service.js';

// The job on several instances, a manual sync and the job on one instance: however many syncs of
// one connection start together, one reads the calendar and writes its intervals.
describe('concurrent syncs of one connection', () => {
  let t: TestApp;
  let feed: Receiver;
  let id: number;
  const ics = vcalendar(...Array.from({ length: 40 }, (_, i) => vevent({ UID: `e${i}`, DTSTART: `202603${String(11 + (i % 15)).padStart(2, '0')}T${String(8 + Math.floor(i / 15)).padStart(2, '0')}0000Z`, DTEND: `202603${String(11 + (i % 15)).padStart(2, '0')}T${String(8 + Math.floor(i / 15)).padStart(2, '0')}3000Z` })));

  before(async () => {
    t = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', CALENDAR_TIMEOUT_MS: '5000' });
    t.clock.set('2026-03-10T12:00:00.000Z');
    feed = await startReceiver();
    const host = await signUp(t.app, { name: 'Racy Host' });
    const res = await t.app.inject({ method: 'POST', url: '/v1/calendars', headers: { cookie: host.cookie }, payload: { kind: 'ics', url: `${feed.origin}/f.ics` } });
    id = body<{ id: number }>(res).id;
  });
  after(async () => {
    await t.close();
    await feed.close();
  });

  test('eight at once: one reads the feed, the others step aside, the intervals are written once', async () => {
    feed.requests.length = 0;
    const held: http.ServerResponse[] = [];
    feed.respond = () => (res) => void held.push(res);
    let settled = 0;
    const runs = Array.from({ length: 8 }, () => syncConnection(t.ctx, id).finally(() => (settled += 1)));
    // The losers return as soon as their claim fails; the winner waits on the held answer.
    while (settled < 7 || held.length < 1) await new Promise((r) => setImmediate(r));
    held[0]!.writeHead(200, { 'content-type': 'text/calendar' }).end(ics);
    const results = await Promise.all(runs);
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal(feed.requests.length, 1);
    const rows = await t.ctx.db.selectFrom('calendar_busy').select((eb) => eb.fn.countAll<number>().as('n')).where('connection_id', '=', id).executeTakeFirstOrThrow();
    assert.equal(Number(rows.n), 40);
  });

  test('a lease left by a sync that died is taken over once it ends', async () => {
    feed.respond = () => ({ status: 200, body: ics });
    await t.ctx.db.updateTable('calendar_connections').set({ sync_lease_until: '2026-03-10T12:05:00.000Z' }).where('id', '=', id).execute();
    assert.equal(await syncConnection(t.ctx, id), false);
    t.clock.set('2026-03-10T12:05:00.001Z');
    assert.equal(await syncConnection(t.ctx, id), true);
  });

  test('a halted connection: the job and resyncs at once, one resync reads it, the job never (issue #31)', async () => {
    feed.respond = () => ({ status: 200, headers: { 'content-type': 'text/calendar' }, body: hostileZoneIcs('16010101T000000', 'SECONDLY') });
    t.clock.set('2026-03-10T13:00:00.000Z');
    assert.equal(await syncConnection(t.ctx, id, { resume: true }), true);
    const halted = await t.ctx.db.selectFrom('calendar_connections').select(['halted_at', 'status']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(halted.halted_at !== null && halted.status === 'error');
    // The feed's answer is held until the seven others have returned, so they all meet the one that
    // reads (on a loaded machine a fast read could end before a late starter claims, which is then a
    // new sync, not a concurrent one).
    const held: http.ServerResponse[] = [];
    feed.respond = () => (res) => void held.push(res);
    feed.requests.length = 0;
    t.clock.set('2026-03-10T14:00:00.000Z');
    let settled = 0;
    const runs = [
      ...Array.from({ length: 4 }, () => syncConnection(t.ctx, id)),
      ...Array.from({ length: 4 }, () => syncConnection(t.ctx, id, { resume: true })),
    ].map((p) => p.finally(() => (settled += 1)));
    while (settled < 7 || held.length < 1) await new Promise((r) => setImmediate(r));
    held[0]!.writeHead(200, { 'content-type': 'text/calendar' }).end(ics);
    const results = await Promise.all(runs);
    // The job's syncs find it halted (or, after a resync claimed it, leased): none of them reads it.
    assert.deepEqual(results.slice(0, 4), [false, false, false, false]);
    assert.equal(results.slice(4).filter(Boolean).length, 1, 'one resync read it');
    assert.equal(feed.requests.length, 1);
    const after = await t.ctx.db.selectFrom('calendar_connections').select(['halted_at', 'status']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(after, { halted_at: null, status: 'ok' });
  });
});
