// Issue #31, F2: an invalid request's answer stays small whatever the input. Validation stops at
// the first problem; a small input lists up to 20 fields; `truncated: true` says there were more.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createKey, signUp, type TestUser } from './factories.js';
import { body, buildTestApp, type TestApp } from './helpers.js';

interface Invalid {
  error: string;
  code: string;
  details: { field: string; message: string }[];
  truncated?: boolean;
}

/** Well under what the old answers took (68.7 MB and 19 MB): a few KB at most. */
const SMALL_ANSWER = 4096;

describe('validation answers are bounded (issue #31, F2)', () => {
  let t: TestApp;
  let user: TestUser;
  let key: Record<string, string>;

  before(async () => {
    t = await buildTestApp();
    user = await signUp(t.app, { name: 'Val Bound' });
    key = { 'x-api-key': (await createKey(t.app, user.cookie, 'live')).key };
  });
  after(() => t.close());

  const post = (url: string, payload: string, headers = key) => t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload });

  test('1 MiB of availability.weekly with 340,000 `{}` answers a small 422 (was 1,020,004 details, 68.7 MB)', async (tc) => {
    const payload = `{"name":"Amplified","duration_minutes":30,"availability":{"timezone":"UTC","weekly":[${Array(340_000).fill('{}').join(',')}]}}`;
    assert.ok(payload.length > 1_000_000 && payload.length <= 1_048_576, `${payload.length} bytes`);
    const started = process.hrtime.bigint();
    const res = await post('/v1/event-types', payload);
    tc.diagnostic(`422 of ${res.body.length} bytes in ${Number(process.hrtime.bigint() - started) / 1e6} ms`);
    assert.equal(res.statusCode, 422, res.body.slice(0, 300));
    assert.ok(res.body.length < SMALL_ANSWER, `${res.body.length} bytes`);
    const b = body<Invalid>(res);
    assert.equal(b.code, 'validation_failed');
    assert.equal(b.truncated, true);
    assert.deepEqual(b.details, [{ field: 'availability.weekly', message: 'must NOT have more than 70 items' }]);
  });

  test('170,000 empty Alertmanager alerts answer a small 422 (was 19 MB)', async () => {
    const integration = body<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/integrations', headers: key, payload: { name: 'Prometheus' } }));
    const payload = `{"version":"4","status":"firing","alerts":[${Array(170_000).fill('{}').join(',')}]}`;
    const res = await post(`/v1/integrations/${integration.key}/alertmanager`, payload, {});
    assert.equal(res.statusCode, 422, res.body.slice(0, 300));
    assert.ok(res.body.length < SMALL_ANSWER, `${res.body.length} bytes`);
    assert.deepEqual(body<Invalid>(res).details, [{ field: 'alerts', message: 'must NOT have more than 1000 items' }]);
    assert.equal(body<Invalid>(res).truncated, true);
  });

  test('Alertmanager label sets are capped: 50,000 labels answer one small 422', async () => {
    const integration = body<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/integrations', headers: key, payload: { name: 'Grafana' } }));
    const labels = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`l${i}`, i]));
    const res = await post(`/v1/integrations/${integration.key}/grafana`, JSON.stringify({ status: 'firing', alerts: [{ status: 'firing', labels }] }), {});
    assert.equal(res.statusCode, 422, res.body.slice(0, 300));
    assert.ok(res.body.length < SMALL_ANSWER, `${res.body.length} bytes`);
    assert.deepEqual(body<Invalid>(res).details, [{ field: 'alerts.0.labels', message: 'must NOT have more than 500 properties' }]);
  });

  test('an input within every cap but over 1,000 values answers its first problem, truncated', async () => {
    // 1,000 blackout dates (the cap), every one wrong: all would be 1,000 details.
    const res = await post('/v1/event-types', JSON.stringify({ name: 'Dates', duration_minutes: 30, blackout_dates: Array(1000).fill('soon') }));
    assert.equal(res.statusCode, 422);
    assert.deepEqual(body<Invalid>(res).details, [{ field: 'blackout_dates.0', message: 'must match pattern "^\\d{4}-\\d{2}-\\d{2}$"' }]);
    assert.equal(body<Invalid>(res).truncated, true);
  });

  test('a small body lists every problem field up to 20, and says when there were more', async () => {
    const windows = (n: number) => Array.from({ length: n }, (_, i) => ({ day: 'mon', start: `x${i}`, end: '10:00' }));
    const few = await post('/v1/event-types', JSON.stringify({ name: 'Few', duration_minutes: 1, availability: { timezone: 'UTC', weekly: windows(2) } }));
    assert.equal(few.statusCode, 422);
    const f = body<Invalid>(few);
    assert.deepEqual(f.details.map((d) => d.field), ['duration_minutes', 'availability.weekly.0.start', 'availability.weekly.1.start']);
    assert.equal('truncated' in f, false, 'all problems listed');
    const many = await post('/v1/event-types', JSON.stringify({ name: 'Many', duration_minutes: 30, availability: { timezone: 'UTC', weekly: windows(25) } }));
    assert.equal(many.statusCode, 422);
    const m = body<Invalid>(many);
    assert.equal(m.details.length, 20);
    assert.deepEqual(m.details[19], { field: 'availability.weekly.19.start', message: m.details[0]!.message });
    assert.equal(m.truncated, true);
  });

  test('the Events API lists at most 20 errors too', async () => {
    const integration = body<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/integrations', headers: key, payload: { name: 'PD' } }));
    const links = Array.from({ length: 40 }, () => ({ href: 5 }));
    const res = await post('/v2/enqueue', JSON.stringify({ routing_key: integration.key, event_action: 'trigger', payload: { summary: 's', source: 's', severity: 'info' }, links }), {});
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(body<{ errors: string[] }>(res).errors.length, 20);
  });
});
