import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { alertmanagerMessage, grafanaMessage } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';

describe('Alertmanager and Grafana webhooks', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let i: CreatedIntegration;
  const live = () => ({ 'x-api-key': w.liveKey });
  before(async () => {
    t = await buildTestApp();
    w = await integrationsWorld(t);
    i = await w.integration();
  });
  after(() => t.close());

  test('Alertmanager with two alerts, one resolved later: one incident per fingerprint', async () => {
    const url = w.path(i.alertmanager_url);
    const fired = await w.call({}, 'POST', url, alertmanagerMessage([
      { name: 'db1', fingerprint: 'aaaa000000000001', status: 'firing' },
      { name: 'db2', fingerprint: 'aaaa000000000002', status: 'firing', severity: 'warning' },
    ]));
    assert.equal(fired.statusCode, 200, fired.body);
    assert.deepEqual(fired.json<{ alerts: { action: string }[] }>().alerts.map((a) => a.action), ['created', 'created']);
    // Alertmanager's next notification of the group: db1 resolved, db2 still firing (a repeat).
    const later = await w.call({}, 'POST', url, alertmanagerMessage([
      { name: 'db1', fingerprint: 'aaaa000000000001', status: 'resolved' },
      { name: 'db2', fingerprint: 'aaaa000000000002', status: 'firing', severity: 'warning' },
    ]));
    assert.deepEqual(later.json<{ alerts: { action: string }[] }>().alerts.map((a) => a.action), ['resolved', 'repeated']);
    const [db1] = await w.tickets(live(), '?source_ref=aaaa000000000001');
    const [db2] = await w.tickets(live(), '?source_ref=aaaa000000000002');
    assert.equal(db1!.status, 'resolved');
    assert.equal(db1!.priority, 'urgent');
    assert.equal(db1!.title, 'Instance db1:9100 down');
    assert.equal(db2!.status, 'open');
    assert.equal(db2!.priority, 'normal');
    assert.match(db2!.description ?? '', /instance = db2:9100/);
  });

  test('the key may come as a Bearer token or basic auth (http_config) instead of in the URL', async () => {
    const bearer = await w.call({ authorization: `Bearer ${i.key}` }, 'POST', '/v1/integrations/alertmanager', alertmanagerMessage([{ name: 'web1', fingerprint: 'bbbb000000000001', status: 'firing' }]));
    assert.equal(bearer.statusCode, 200, bearer.body);
    const basic = `Basic ${Buffer.from(`alertmanager:${i.key}`).toString('base64')}`;
    const viaBasic = await w.call({ authorization: basic }, 'POST', '/v1/integrations/alertmanager', alertmanagerMessage([{ name: 'web1', fingerprint: 'bbbb000000000001', status: 'resolved' }]));
    assert.equal(viaBasic.json<{ alerts: { action: string }[] }>().alerts[0]!.action, 'resolved');
    const none = await w.call({}, 'POST', '/v1/integrations/alertmanager', alertmanagerMessage([{ name: 'web1', fingerprint: 'bbbb000000000001', status: 'firing' }]));
    assert.equal(none.statusCode, 401);
    const wrong = await w.call({ authorization: 'Bearer not-a-key' }, 'POST', '/v1/integrations/grafana', grafanaMessage('firing'));
    assert.equal(wrong.statusCode, 401);
  });

  test("Grafana's contact point: firing opens, a repeat appends, resolved resolves", async () => {
    const url = w.path(i.grafana_url);
    assert.equal((await w.call({}, 'POST', url, grafanaMessage('firing'))).statusCode, 200);
    assert.equal((await w.call({}, 'POST', url, grafanaMessage('firing'))).statusCode, 200);
    let [ticket] = await w.tickets(live(), '?source_ref=c6eadffa33fcdf37');
    assert.equal(ticket!.title, 'This alert was triggered for zone us-1');
    assert.match(ticket!.description ?? '', /B = 44\.239/);
    assert.match(ticket!.description ?? '', /Silence: https:\/\/play\.grafana\.org/);
    assert.equal((await w.call({}, 'POST', url, grafanaMessage('resolved'))).statusCode, 200);
    const all = await w.tickets(live(), '?source_ref=c6eadffa33fcdf37');
    assert.equal(all.length, 1);
    [ticket] = all;
    assert.equal(ticket!.status, 'resolved');
    assert.deepEqual((await w.timelineTypes(ticket!.Id)).map((e) => e.type), ['created', 'alert_repeated', 'status_changed']);
  });

  test('bad bodies are 422 JSON; an over-large one 413', async () => {
    const url = w.path(i.alertmanager_url);
    for (const payload of [{ status: 'firing' }, { ...alertmanagerMessage([]), alerts: [] }, { ...alertmanagerMessage([{ name: 'x', fingerprint: 'f', status: 'firing' }]), status: 'exploded' }]) {
      const res = await w.call({}, 'POST', url, payload);
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json<{ code: string }>().code, 'validation_failed');
    }
    const big = alertmanagerMessage([{ name: 'x', fingerprint: 'f', status: 'firing' }]);
    const res = await w.call({}, 'POST', url, { ...big, commonAnnotations: { blob: 'x'.repeat(1_100_000) } });
    assert.equal(res.statusCode, 413);
  });
});
