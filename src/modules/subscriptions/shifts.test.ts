// `oncall.shift_started`: a post when a person's time on call begins, once per shift, exactly once
// across two instances on one database (on SQLite: concurrent runs of the one instance).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultJobs } from '../../jobs/scheduler.js';
import { secondInstance } from '../../../test/helpers.js';
import { dispatchWorld, signInAgain, type DispatchWorld } from '../../../test/world.js';
import { sendShiftStarts } from './index.js';

describe('oncall.shift_started', () => {
  let w: DispatchWorld;
  before(async () => {
    w = await dispatchWorld({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' });
    w.t.clock.set('2026-03-02T08:00:00.000Z');
    await signInAgain(w);
    await w.ok(w.as(w.admin), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, {
      name: 'Water network',
      time_zone: 'Europe/London',
      layers: [{ start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] }],
    });
  });
  after(() => w.close());

  const at = (iso: string) => w.t.clock.set(iso);
  const posts = () => w.t.ctx.db.selectFrom('outbox').select(['recipient', 'payload', 'livemode', 'user_id']).where('topic', '=', 'oncall.shift_started').orderBy('id').execute();

  test('runs on the job scheduler every minute', () => {
    assert.equal(defaultJobs(w.t.ctx).find((j) => j.name === 'subscription-shifts')?.intervalMs, 60_000);
  });

  test('nothing without a subscription to it; then one post per shift start, in each subscription’s format', async () => {
    at('2026-03-02T09:00:00.000Z');
    assert.equal(await sendShiftStarts(w.t.ctx), 0, 'no org wants it');
    const other = await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/webhooks`, { url: 'http://127.0.0.1:9/incidents', events: ['incident.created'], format: 'standard' });
    assert.equal(await sendShiftStarts(w.t.ctx), 0, 'a subscription to other events is not one');
    const chat = await w.ok<{ id: number; url: string }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/webhooks`, { url: 'http://127.0.0.1:9/room', events: ['oncall.shift_started'], format: 'chat' });
    const hook = await w.ok<{ id: number; url: string }>(w.testKey, 'POST', `/v1/orgs/${w.orgSlug}/webhooks`, { url: 'http://127.0.0.1:9/sandbox', events: ['oncall.shift_started'], format: 'standard' });

    at('2026-03-02T08:59:00.000Z');
    assert.equal(await sendShiftStarts(w.t.ctx), 0, 'not before it starts');
    at('2026-03-02T09:00:30.000Z');
    assert.equal(await sendShiftStarts(w.t.ctx), 1);
    assert.equal(await sendShiftStarts(w.t.ctx), 0, 'once');
    const sent = await posts();
    assert.deepEqual(sent.map((p) => [p.recipient, p.livemode, p.user_id]), [
      [chat.url, 1, w.owner.id],
      [hook.url, 0, w.owner.id],
    ], 'schedules have no mode: subscriptions of both modes receive it');
    const text = (JSON.parse(sent[0]!.payload) as { body: { text: string } }).body.text;
    assert.equal(text.split('\n')[0], 'Ann Responder is now on call: Water network');
    const standard = (JSON.parse(sent[1]!.payload) as { body: { type: string; timestamp: string; data: unknown } }).body;
    assert.deepEqual(standard, {
      type: 'oncall.shift_started',
      timestamp: '2026-03-02T09:00:00.000Z',
      data: { schedule: { id: (standard.data as { schedule: { id: number } }).schedule.id, name: 'Water network' }, user: { id: w.ann.id, name: 'Ann Responder' }, start: '2026-03-02T09:00:00.000Z', end: '2026-03-03T09:00:00.000Z' },
    });
    at('2026-03-02T09:12:00.000Z');
    assert.equal(await sendShiftStarts(w.t.ctx), 0);
    await w.ok(w.as(w.owner), 'DELETE', `/v1/orgs/${w.orgSlug}/webhooks/${other.id}`);
  });

  test('a late run still posts a shift begun up to 10 minutes ago, not one begun earlier', async () => {
    at('2026-03-03T09:09:00.000Z');
    assert.equal(await sendShiftStarts(w.t.ctx), 1);
    at('2026-03-04T09:11:00.000Z');
    assert.equal(await sendShiftStarts(w.t.ctx), 0);
  });

  test('two instances running it at once post each shift once', async () => {
    const second = await secondInstance(w.t);
    try {
      at('2026-03-05T09:00:10.000Z');
      const before = (await posts()).length;
      const runs = await Promise.all([sendShiftStarts(w.t.ctx), sendShiftStarts(second.ctx), sendShiftStarts(w.t.ctx), sendShiftStarts(second.ctx)]);
      assert.equal(runs.reduce((a, b) => a + b, 0), 1, `one run posted it (${runs.join(', ')})`);
      assert.equal((await posts()).length - before, 2, 'one post per subscription');
    } finally {
      await second.close();
    }
  });
});
