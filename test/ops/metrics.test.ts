// GET /metrics (issue #22): token protection, names and labels, and counters that move on a
// beacon, a delivery and a job. Runs on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';
import { signUp, type TestUser } from '../factories.js';
import { processDue, type Senders } from '../../src/modules/deliveries/worker.js';
import { startJobs } from '../../src/jobs/scheduler.js';
import { ManualTicker } from '../../src/jobs/manual-ticker.js';

const TOKEN = 'metrics-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

/** The value of one sample line (`name{labels} value`), or undefined when it is absent. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metrics', () => {
  let t: TestApp;
  let user: TestUser;
  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: auth });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  before(async () => {
    t = await buildTestApp({ METRICS_TOKEN: TOKEN });
    user = await signUp(t.app);
  });
  after(() => t.close());

  test('404 without METRICS_TOKEN, whatever the credential', async () => {
    const bare = await buildTestApp();
    try {
      const res = await bare.app.inject({ method: 'GET', url: '/metrics', headers: auth });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json<{ code: string }>().code, 'not_found');
    } finally {
      await bare.close();
    }
  });

  test('401 without the token or with a wrong one; a session or API key is no metrics token', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: TOKEN }, { cookie: user.cookie }]) {
      const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      assert.equal(res.statusCode, 401, JSON.stringify(headers));
      assert.equal(res.json<{ code: string }>().code, 'unauthorized');
    }
  });

  test('every metric of the issue is exposed with its labels; requests by route pattern, never raw path', async () => {
    await t.app.inject({ method: 'GET', url: '/v1/tickets/424242', headers: { cookie: user.cookie } });
    await t.app.inject({ method: 'GET', url: '/v1/no-such-route/secret-looking-value' });
    const text = await scrape();
    for (const name of [
      'http_request_duration_seconds',
      'muster_sse_subscribers',
      'muster_outbox_pending',
      'muster_outbox_oldest_age_seconds',
      'muster_deliveries_total',
      'muster_beacons_total',
      'muster_active_devices',
      'muster_incidents_open',
      'muster_sla_breaches_total',
      'muster_job_runs_total',
      'muster_database_up',
      'muster_redis_up',
      'muster_backups_total',
      'muster_retention_deleted_total',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    assert.equal(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="/v1/tickets/:id",status_class="4xx"'), 1);
    assert.equal(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="unmatched",status_class="4xx"'), 1);
    assert.doesNotMatch(text, /424242|secret-looking-value/);
    assert.equal(sample(text, 'muster_database_up'), 1);
    assert.equal(sample(text, 'muster_redis_up'), -1);
    for (const p of ['low', 'normal', 'high', 'urgent']) assert.equal(typeof sample(text, 'muster_incidents_open', `priority="${p}"`), 'number', p);
    for (const k of ['email', 'webhook', 'push', 'phone', 'calendar']) assert.equal(typeof sample(text, 'muster_outbox_pending', `kind="${k}"`), 'number', k);
  });

  test('gauges read stored state at scrape time: open incidents by priority, outbox by kind with the oldest age', async () => {
    const before = await scrape();
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: user.cookie }, payload: { title: 'metrics', priority: 'urgent' } });
    assert.equal(res.statusCode, 201, res.body);
    t.clock.advance(90_000);
    const text = await scrape();
    assert.equal(sample(text, 'muster_incidents_open', 'priority="urgent"'), (sample(before, 'muster_incidents_open', 'priority="urgent"') ?? 0) + 1);
    assert.ok((sample(text, 'muster_outbox_pending', 'kind="email"') ?? 0) >= 1, 'the sign-up emails wait in the outbox');
    assert.ok((sample(text, 'muster_outbox_oldest_age_seconds', 'kind="email"') ?? 0) >= 90);
  });

  test('a beacon moves muster_beacons_total and muster_active_devices', async () => {
    const before = await scrape();
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/signals',
      headers: { cookie: user.cookie },
      payload: { type: 'beacon', lat: 52.5, lng: 13.4, meta: { device_id: 'dev-abcdef-12345678' } },
    });
    assert.equal(res.statusCode, 201, res.body);
    const text = await scrape();
    assert.equal(sample(text, 'muster_beacons_total'), (sample(before, 'muster_beacons_total') ?? 0) + 1);
    assert.equal(sample(text, 'muster_active_devices'), (sample(before, 'muster_active_devices') ?? 0) + 1);
  });

  test('a delivery moves muster_deliveries_total by kind and outcome', async () => {
    const sent = async () => ({ outcome: 'sent' as const });
    const senders: Senders = { email: sent, webhook: sent, push: sent, phone: sent, calendar: sent };
    const attempted = await processDue(t.ctx, senders);
    assert.ok(attempted >= 1);
    const text = await scrape();
    assert.ok((sample(text, 'muster_deliveries_total', 'kind="email",outcome="sent"') ?? 0) >= 1);
    const kinds = ['email', 'webhook', 'push', 'phone', 'calendar'];
    assert.equal(kinds.reduce((n, kind) => n + (sample(text, 'muster_deliveries_total', `kind="${kind}",outcome="sent"`) ?? 0), 0), attempted);
    assert.equal(sample(text, 'muster_outbox_pending', 'kind="email"'), 0);
  });

  test('a job run moves muster_job_runs_total by job and outcome', async () => {
    const ticker = new ManualTicker(t.clock.now().getTime());
    const stop = startJobs(
      t.ctx,
      [
        { name: 'metrics-ok', intervalMs: 1_000, run: async () => undefined },
        { name: 'metrics-fails', intervalMs: 1_000, run: () => Promise.reject(new Error('boom')) },
      ],
      ticker,
    );
    await ticker.advance(1_000);
    await stop();
    const text = await scrape();
    assert.equal(sample(text, 'muster_job_runs_total', 'job="metrics-ok",outcome="ok"'), 1);
    assert.equal(sample(text, 'muster_job_runs_total', 'job="metrics-fails",outcome="failed"'), 1);
  });
});
