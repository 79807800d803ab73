import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AppContext } from '../../context.js';
import { buildTestApp, restartedContext, secondInstance, testDialect, type TestApp } from '../../../test/helpers.js';
import { alertmanagerMessage } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';
import { HOUR, MINUTE } from '../../lib/clock.js';
import { checkHeartbeats, HEARTBEAT_TICK_MS } from './index.js';

interface Heartbeat {
  interval_seconds: number;
  grace_seconds: number;
  status: 'new' | 'up' | 'late' | 'down';
  last_ping_at: string | null;
  due_at: string | null;
  incident_id: number | null;
}
type HeartbeatIntegration = CreatedIntegration & { type: string; heartbeat: Heartbeat | null; heartbeat_url?: string };
interface LogEntry {
  id: number;
  source: string;
  outcome: string;
  reason: string | null;
  incident_id: number | null;
  body: string | null;
}

describe('heartbeats', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let policyId: number;
  const live = () => ({ 'x-api-key': w.liveKey });

  before(async () => {
    t = await buildTestApp();
    w = await integrationsWorld(t);
    const [org] = (await w.call(live(), 'GET', '/v1/orgs')).json<{ orgs: { slug: string }[] }>().orgs;
    // Email at once, so each page is one notification; the policy pages Olga at level 1.
    await w.call({ cookie: w.owner.cookie }, 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'email', delay_minutes: 0 }], low: [{ channel: 'email', delay_minutes: 0 }] });
    const policy = await w.call(live(), 'POST', `/v1/orgs/${org!.slug}/escalation-policies`, { name: 'Ops', levels: [{ delay_minutes: 5, targets: [{ type: 'user', id: w.owner.id }] }] });
    assert.equal(policy.statusCode, 201, policy.body);
    policyId = policy.json<{ id: number }>().id;
    // The checker's first run in this instance (as after a start): from here on, runs are ticks.
    await checkHeartbeats(t.ctx);
  });
  after(() => t.close());

  const heartbeat = async (fields: object = {}) => {
    const res = await w.call(live(), 'POST', '/v1/integrations', { name: 'Nightly backup', type: 'heartbeat', interval_seconds: 60, grace_seconds: 30, escalation_policy_id: policyId, ...fields });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<HeartbeatIntegration>();
  };
  const stateOf = async (id: number): Promise<Heartbeat> => {
    const list = (await w.call(live(), 'GET', '/v1/integrations')).json<{ integrations: HeartbeatIntegration[] }>().integrations;
    const found = list.find((i) => i.id === id);
    assert.ok(found?.heartbeat, `integration ${id} is a heartbeat`);
    return found.heartbeat;
  };
  const pingUrl = (i: HeartbeatIntegration) => w.path(i.heartbeat_url!);
  const ping = async (i: HeartbeatIntegration, method: 'GET' | 'HEAD' | 'POST' = 'GET') => {
    const res = await t.app.inject({ method, url: pingUrl(i) });
    assert.equal(res.statusCode, 200, res.body);
    return res;
  };
  /** The scheduler's ticks of the checker over `ms`, one every HEARTBEAT_TICK_MS; answers the incidents they opened. */
  async function tick(ms: number, ctx: AppContext = t.ctx): Promise<number> {
    let opened = 0;
    for (let left = ms; left > 0; left -= HEARTBEAT_TICK_MS) {
      t.clock.advance(Math.min(HEARTBEAT_TICK_MS, left));
      opened += await checkHeartbeats(ctx);
    }
    await t.ctx.escalation.idle();
    return opened;
  }
  const events = async (i: { id: number }) => (await w.call(live(), 'GET', `/v1/integrations/${i.id}/events`)).json<{ events: LogEntry[] }>().events;
  const revoke = async (i: { id: number }) => assert.equal((await w.call(live(), 'DELETE', `/v1/integrations/${i.id}`)).statusCode, 200);
  const missed = (i: { id: number }) => w.tickets(live(), `?source_ref=heartbeat:${i.id}`);

  test('created with its interval and URL; bad intervals answer 422 naming the field', async () => {
    const i = await heartbeat();
    assert.equal(i.type, 'heartbeat');
    assert.equal(i.heartbeat_url, `http://muster.test/v1/integrations/${i.key}/heartbeat`);
    assert.deepEqual(i.heartbeat, { interval_seconds: 60, grace_seconds: 30, status: 'new', last_ping_at: null, due_at: null, incident_id: null });
    for (const [fields, field] of [
      [{ interval_seconds: 29 }, 'interval_seconds'],
      [{ interval_seconds: 86_401 }, 'interval_seconds'],
      [{ type: 'heartbeat' }, 'interval_seconds'],
      [{ type: 'alerts' }, 'interval_seconds'],
    ] as const) {
      const body: Record<string, unknown> = Object.assign({ name: 'x', type: 'heartbeat', interval_seconds: 60 }, fields);
      if (!('interval_seconds' in fields) && fields.type === 'heartbeat') delete body.interval_seconds;
      const res = await w.call(live(), 'POST', '/v1/integrations', body);
      assert.equal(res.statusCode, 422, `${JSON.stringify(fields)}: ${res.body}`);
      assert.deepEqual(res.json<{ details: { field: string }[] }>().details.map((d) => d.field), [field], JSON.stringify(fields));
    }
    const plain = await w.integration();
    const notOne = await w.call(live(), 'PATCH', `/v1/integrations/${plain.id}`, { interval_seconds: 60 });
    assert.equal(notOne.statusCode, 422, notOne.body);
    // The heartbeat URL of an integration that is not a heartbeat: 404.
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/integrations/${plain.key}/heartbeat` })).statusCode, 404);
  });

  test('never pinged, it cannot miss; pinged, it goes late after its interval, then down (one incident, paged), and the next ping resolves it', async () => {
    const i = await heartbeat();
    assert.equal(await tick(10 * MINUTE), 0, 'a new heartbeat does not miss');
    assert.equal((await stateOf(i.id)).status, 'new');
    const pinged = await ping(i);
    assert.deepEqual(pinged.json(), { status: 'ok' });
    let state = await stateOf(i.id);
    assert.equal(state.status, 'up');
    assert.equal(state.last_ping_at, t.clock.now().toISOString());
    assert.equal(await tick(60_000), 0);
    assert.equal((await stateOf(i.id)).status, 'up', 'on time at exactly its interval');
    assert.equal(await tick(HEARTBEAT_TICK_MS), 0);
    assert.equal((await stateOf(i.id)).status, 'late', 'past its interval, within its grace');
    assert.equal(await tick(25_000), 0, 'late up to the end of its grace');
    assert.equal(await tick(HEARTBEAT_TICK_MS), 1, 'down once its grace is over');
    assert.equal(await tick(10 * MINUTE), 0, 'one incident per miss, however many ticks follow');
    state = await stateOf(i.id);
    assert.equal(state.status, 'down');
    const [incident] = await missed(i);
    assert.ok(incident);
    assert.equal(state.incident_id, incident.Id);
    assert.equal(incident.title, 'Heartbeat missed: Nightly backup');
    assert.equal(incident.priority, 'urgent');
    assert.equal(incident.source, 'alert');
    assert.equal(incident.status, 'open');
    const paged = (await w.timelineTypes(incident.Id)).filter((e) => e.type === 'paged');
    assert.deepEqual(paged.map((e) => e.data.user_id), [w.owner.id], "paged by the integration's policy");

    // Any method pings; a POST's body is never read.
    const res = await t.app.inject({ method: 'POST', url: pingUrl(i), headers: { 'content-type': 'application/json' }, payload: '{not json' });
    assert.equal(res.statusCode, 200, res.body);
    state = await stateOf(i.id);
    assert.equal(state.status, 'up');
    assert.equal(state.incident_id, null);
    const [after] = await missed(i);
    assert.equal(after!.status, 'resolved');
    const timeline = await w.timelineTypes(incident.Id);
    assert.equal(timeline[0]!.type, 'created');
    assert.equal(timeline[0]!.data.integration_tool, 'heartbeat');
    assert.deepEqual(timeline.at(-1), { ...timeline.at(-1), type: 'status_changed', data: { from: 'open', to: 'resolved' } });
    await ping(i, 'HEAD');
    assert.deepEqual((await events(i)).map((e) => [e.source, e.outcome, e.incident_id]), [
      ['heartbeat', 'resolved', incident.Id],
      ['heartbeat', 'opened', incident.Id],
    ], 'the miss and the recovery are logged; ordinary pings are not');
    // A second miss opens a new incident.
    assert.equal(await tick(95_000), 1);
    assert.equal((await missed(i)).length, 2);
    await revoke(i);
    // A ping for a deleted heartbeat: 401, as a wrong key.
    assert.equal((await t.app.inject({ method: 'GET', url: pingUrl(i) })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/integrations/nosuchkey/heartbeat' })).statusCode, 401);
  });

  test("Alertmanager's Watchdog pattern: any POST to the heartbeat's Alertmanager URL is a ping", async () => {
    const i = await heartbeat({ name: 'Watchdog', interval_seconds: 120, grace_seconds: 0 });
    const watchdog = { ...alertmanagerMessage([{ name: 'prometheus', fingerprint: 'watchdog-1', status: 'firing', severity: 'none' }]) };
    watchdog.alerts[0]!.labels.alertname = 'Watchdog';
    const res = await w.call({}, 'POST', w.path(i.alertmanager_url), watchdog);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { status: 'success', alerts: [] });
    assert.equal((await stateOf(i.id)).status, 'up');
    assert.equal((await w.tickets(live(), '?source_ref=watchdog-1')).length, 0, 'the Watchdog alert itself opens nothing');
    // Alertmanager re-sends it every repeat_interval: each keeps it up, whatever the body.
    for (let n = 0; n < 3; n++) {
      assert.equal(await tick(100_000), 0);
      const again = await t.app.inject({ method: 'POST', url: w.path(i.alertmanager_url), headers: { 'content-type': 'application/json' }, payload: n === 2 ? '{}' : JSON.stringify(watchdog) });
      assert.equal(again.statusCode, 200, again.body);
    }
    // The key as a Bearer token on the shared URL counts too.
    const bearer = await w.call({ authorization: `Bearer ${i.key}` }, 'POST', '/v1/integrations/alertmanager', watchdog);
    assert.equal(bearer.statusCode, 200, bearer.body);
    // The Watchdog stops arriving (Prometheus or Alertmanager is down): one incident.
    assert.equal(await tick(120_000), 0);
    assert.equal(await tick(HEARTBEAT_TICK_MS), 1);
    await w.call({}, 'POST', w.path(i.alertmanager_url), watchdog);
    assert.deepEqual((await missed(i)).map((x) => x.status), ['resolved'], 'and it comes back: resolved');
    await revoke(i);
  });

  test("any POST to the heartbeat's Events API or Grafana URL is a ping too, whatever its body, answered as that tool expects", async () => {
    const i = await heartbeat({ name: 'Other tools', interval_seconds: 60, grace_seconds: 0 });
    const post = (url: string, payload: string) => t.app.inject({ method: 'POST', url: w.path(url), headers: { 'content-type': 'application/json' }, payload });
    const lastPing = async () => (await stateOf(i.id)).last_ping_at;
    for (const [url, status, payload] of [
      [i.events_url, 202, '{"event_action": "trigger"}'],
      [i.events_url, 202, '{not json'],
      [i.grafana_url, 200, '{"alerts": "nope"}'],
    ] as const) {
      t.clock.advance(10_000);
      const res = await post(url, payload);
      assert.equal(res.statusCode, status, `${url}: ${res.body}`);
      assert.equal(await lastPing(), t.clock.now().toISOString(), `${url} with ${payload} is a ping`);
    }
    assert.equal((await events(i)).length, 0, 'pings are not logged');
    await revoke(i);
  });

  test('a pause longer than the interval gives a fresh interval: no burst of incidents', async () => {
    const beats = [await heartbeat({ name: 'A' }), await heartbeat({ name: 'B' }), await heartbeat({ name: 'C', interval_seconds: 600 })];
    for (const b of beats) await ping(b);
    // The service stops for two hours: no ticks, no pings.
    t.clock.advance(2 * HOUR);
    assert.equal(await checkHeartbeats(t.ctx), 0, 'the first tick after the pause opens nothing');
    assert.deepEqual(await Promise.all(beats.map(async (b) => (await stateOf(b.id)).status)), ['up', 'up', 'up']);
    // A fresh interval is an interval: silence through it is a miss (A and B after 90 s; C after 630 s).
    assert.equal(await tick(85_000), 0);
    assert.equal(await tick(10_000), 2);
    assert.equal(await tick(540_000), 1);
    for (const b of beats) assert.deepEqual((await missed(b)).map((x) => x.status), ['open']);
    for (const b of beats) await revoke(b);
  });

  test('the first tick after a restart gives a fresh interval, even after a pause shorter than the interval', async () => {
    const control = await heartbeat({ name: 'Control', interval_seconds: 3600, grace_seconds: 0 });
    await ping(control);
    assert.equal(await tick(HOUR - MINUTE), 0);
    // Two minutes without ticks (shorter than its hour): the running instance finds the miss.
    t.clock.advance(2 * MINUTE);
    assert.equal(await checkHeartbeats(t.ctx), 1, 'a gap shorter than the interval is no pause');
    await revoke(control);

    const b = await heartbeat({ name: 'Hourly', interval_seconds: 3600, grace_seconds: 0 });
    await ping(b);
    assert.equal(await tick(HOUR - MINUTE), 0);
    t.clock.advance(2 * MINUTE);
    const restarted = await restartedContext(t);
    try {
      assert.equal(await checkHeartbeats(restarted), 0, 'nothing on the first tick of a new instance');
      assert.equal((await stateOf(b.id)).due_at, new Date(t.clock.nowMs() + HOUR).toISOString(), 'a fresh hour from the restart');
      assert.equal(await tick(HOUR, restarted), 0);
      assert.equal(await tick(HEARTBEAT_TICK_MS, restarted), 1, 'then silence through it is a miss');
    } finally {
      await restarted.close();
    }
    await revoke(b);
  });

  describe(testDialect === 'postgres' ? 'two instances on one database' : 'concurrent checkers of one instance', () => {
    let other: AppContext;
    let closeOther: () => Promise<void>;
    before(async () => {
      ({ ctx: other, close: closeOther } = await secondInstance(t));
      await checkHeartbeats(other); // its first run (a fresh interval for all), before any of these is due
    });
    after(() => closeOther());

    test('each miss opens exactly one incident however many checkers run together', async () => {
      const beats = [];
      for (let n = 0; n < 5; n++) beats.push(await heartbeat({ name: `Race ${n}`, grace_seconds: 0 }));
      for (let round = 0; round < 3; round++) {
        for (const b of beats) await ping(b);
        assert.equal(await tick(60_000), 0, 'on time at the due time itself');
        t.clock.advance(HEARTBEAT_TICK_MS);
        const opened = await Promise.all(Array.from({ length: 6 }, (_, n) => checkHeartbeats(n % 2 === 0 ? t.ctx : other)));
        assert.equal(opened.reduce((a, b) => a + b, 0), beats.length, `round ${round}: one miss each`);
        await Promise.all([t.ctx.escalation.idle(), other.escalation.idle()]);
        for (const b of beats) {
          assert.equal((await missed(b)).length, round + 1, `round ${round}: one incident per miss`);
          assert.deepEqual((await events(b)).map((e) => e.outcome).filter((o) => o !== 'resolved'), Array(round + 1).fill('opened'), 'each miss logged once: opened, never repeated');
          const [last] = await missed(b);
          assert.deepEqual((await w.timelineTypes(last!.Id)).filter((e) => e.type === 'created' || e.type === 'alert_repeated').map((e) => e.type), ['created']);
        }
      }
      for (const b of beats) await revoke(b);
    });
  });
});
