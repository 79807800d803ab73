import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { alertmanagerMessage, grafanaMessage, pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type Ticket, type IntegrationsWorld } from '../../../test/world.js';
import { setPlan, signUp } from '../../../test/factories.js';

describe('integrations API', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  before(async () => {
    t = await buildTestApp({ INBOUND_EMAIL_DOMAIN: 'in.muster.test' });
    w = await integrationsWorld(t);
  });
  after(() => t.close());

  test('an admin creates one: the key is shown once, the URLs carry it, the list never shows it', async () => {
    const created = await w.integration({ cookie: w.owner.cookie }, { name: 'Prometheus' });
    assert.equal(created.livemode, true);
    assert.match(created.key, /^[A-Za-z0-9_-]{32}$/);
    for (const url of [created.events_url, created.alertmanager_url, created.grafana_url]) assert.ok(url.startsWith(`http://muster.test/v1/integrations/${created.key}/`), url);
    assert.match(created.email_address ?? '', /^in-[0-9a-f]{24}@in\.muster\.test$/);
    const list = await w.call({ cookie: w.owner.cookie }, 'GET', '/v1/integrations');
    assert.equal(list.statusCode, 200);
    assert.ok(!list.body.includes(created.key), 'the list never carries the key');
    assert.deepEqual(list.json<{ integrations: { id: number; redacted_key: string }[] }>().integrations.map((i) => [i.id, i.redacted_key]), [[created.id, `...${created.key.slice(-4)}`]]);
  });

  test('members may not create, list (by org) or revoke integrations', async () => {
    const mine = await w.integration();
    const created = await w.call({ cookie: w.member.cookie }, 'POST', '/v1/integrations', { name: 'x', org_id: mine.org_id });
    assert.equal(created.statusCode, 403, created.body);
    assert.equal((await w.call({ cookie: w.member.cookie }, 'GET', `/v1/integrations?org_id=${mine.org_id}`)).statusCode, 403);
    assert.equal((await w.call({ cookie: w.member.cookie }, 'DELETE', `/v1/integrations/${mine.id}`)).statusCode, 403);
  });

  test('a default assignee must be a member; new incidents go to them, with the severity mapping given', async () => {
    const bad = await w.call({ 'x-api-key': w.liveKey }, 'POST', '/v1/integrations', { name: 'x', default_assignee_id: 999_999 });
    assert.equal(bad.statusCode, 422, bad.body);
    const i = await w.integration(undefined, { default_assignee_id: w.member.id, priority_map: { info: 'high' } });
    const res = await w.call({}, 'POST', w.path(i.events_url), pdTrigger('', 'assigned-1', 'info'));
    assert.equal(res.statusCode, 202, res.body);
    const [ticket] = await w.tickets({ 'x-api-key': w.liveKey }, '?source_ref=assigned-1');
    assert.equal(ticket?.assignee_id, w.member.id);
    assert.equal(ticket?.priority, 'high');
    const patched = await w.call({ 'x-api-key': w.liveKey }, 'PATCH', `/v1/integrations/${i.id}`, { priority_map: null, default_assignee_id: null });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json<{ priority_map: { info: string } }>().priority_map.info, 'low');
    // Only unknown fields (the fuzz suite's find): nothing to change, not a 500.
    const unknownOnly = await w.call({ 'x-api-key': w.liveKey }, 'PATCH', `/v1/integrations/${i.id}`, { color: 'red' });
    assert.equal(unknownOnly.statusCode, 200, unknownOnly.body);
  });

  test('without org_id: never a guess among several shared orgs (422 naming org_id); one shared org is taken', async () => {
    const boss = await signUp(t.app, { name: 'Bea Boss' });
    await setPlan(t.app, w.owner.cookie, boss.id, 'enterprise');
    const as = { cookie: boss.cookie };
    const org = async (name: string) => {
      const res = await w.call(as, 'POST', '/v1/orgs', { name });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<{ id: number }>();
    };
    const north = await org('Water North');
    const one = await w.call(as, 'POST', '/v1/integrations', { name: 'Prometheus' });
    assert.equal(one.statusCode, 201, one.body);
    assert.equal(one.json<{ org_id: number }>().org_id, north.id, 'the one shared org, not the personal one');
    const south = await org('Water South');
    const two = await w.call(as, 'POST', '/v1/integrations', { name: 'Grafana' });
    assert.equal(two.statusCode, 422, two.body);
    const err = two.json<{ code: string; details: { field: string; message: string }[] }>();
    assert.equal(err.code, 'validation_failed');
    assert.deepEqual(err.details.map((d) => d.field), ['org_id']);
    assert.match(err.details[0]!.message, new RegExp(`${north.id} \\(Water North\\).*${south.id} \\(Water South\\)`));
    const chosen = await w.call(as, 'POST', '/v1/integrations', { name: 'Grafana', org_id: south.id });
    assert.equal(chosen.statusCode, 201, chosen.body);
    assert.equal(chosen.json<{ org_id: number }>().org_id, south.id);
  });

  test("an integration's incidents name it and the tool that posted; ?source=integration lists them, ?source=alert only field alerts", async () => {
    const i = await w.integration(undefined, { name: 'Prometheus prod' });
    assert.equal((await w.call({}, 'POST', w.path(i.events_url), pdTrigger('', 'named-1'))).statusCode, 202);
    assert.equal((await w.call({}, 'POST', w.path(i.alertmanager_url), alertmanagerMessage([{ name: 'db-named', fingerprint: 'fp-named-1', status: 'firing' }]))).statusCode, 200);
    assert.equal((await w.call({}, 'POST', w.path(i.grafana_url), grafanaMessage('firing'))).statusCode, 200);
    const alert = await w.call({ 'x-api-key': w.liveKey }, 'POST', '/v1/signals', { type: 'alert', note: 'Fence down at the pumping station' });
    assert.equal(alert.statusCode, 201, alert.body);
    const fieldId = alert.json<{ ticket_id: number }>().ticket_id;

    type Named = Ticket & { integration: { id: number; name: string; tool: string | null } | null };
    const list = async (query: string) => (await w.tickets({ 'x-api-key': w.liveKey }, query)) as Named[];
    const fromTools = await list('?source=integration&limit=200');
    const byRef = new Map(fromTools.map((x) => [x.source_ref, x.integration]));
    assert.deepEqual(byRef.get('named-1'), { id: i.id, name: 'Prometheus prod', tool: 'events_api' });
    assert.deepEqual(byRef.get('fp-named-1'), { id: i.id, name: 'Prometheus prod', tool: 'alertmanager' });
    assert.deepEqual(byRef.get('c6eadffa33fcdf37'), { id: i.id, name: 'Prometheus prod', tool: 'grafana' });
    assert.ok(fromTools.every((x) => x.integration !== null));
    assert.ok(!fromTools.some((x) => x.Id === fieldId), 'a field alert is no integration');
    const fieldAlerts = await list('?source=alert&limit=200');
    assert.ok(fieldAlerts.some((x) => x.Id === fieldId));
    assert.ok(fieldAlerts.every((x) => x.integration === null), 'source=alert: field alerts only');

    const one = fromTools.find((x) => x.source_ref === 'named-1')!;
    const got = await w.call({ 'x-api-key': w.liveKey }, 'GET', `/v1/tickets/${one.Id}`);
    assert.deepEqual(got.json<Named>().integration, { id: i.id, name: 'Prometheus prod', tool: 'events_api' });
    assert.equal((await w.call({ 'x-api-key': w.liveKey }, 'GET', `/v1/tickets/${fieldId}`)).json<Named>().integration, null);
    const created = (await w.timelineTypes(one.Id)).find((e) => e.type === 'created')!;
    assert.deepEqual([created.data.integration_id, created.data.integration_name, created.data.integration_tool], [i.id, 'Prometheus prod', 'events_api']);
  });

  test('a revoked key answers 401 on every URL', async () => {
    const i = await w.integration();
    const revoked = await w.call({ 'x-api-key': w.liveKey }, 'DELETE', `/v1/integrations/${i.id}`);
    assert.deepEqual(revoked.json(), { id: i.id, revoked: true });
    for (const url of [i.events_url, i.alertmanager_url, i.grafana_url]) {
      const res = await w.call({}, 'POST', w.path(url), pdTrigger(i.key, 'after-revoke'));
      assert.equal(res.statusCode, 401, `${url}: ${res.body}`);
    }
    assert.equal((await w.call({}, 'POST', '/v2/enqueue', pdTrigger(i.key, 'after-revoke'))).statusCode, 401);
    assert.equal((await w.call({ 'x-api-key': w.liveKey }, 'DELETE', `/v1/integrations/${i.id}`)).statusCode, 404);
  });

  test('test mode: an integration made with a test key opens test incidents, unseen by live credentials', async () => {
    const i = await w.integration({ 'x-api-key': w.testKey });
    assert.equal(i.livemode, false);
    const res = await w.call({}, 'POST', w.path(i.events_url), pdTrigger('', 'sandbox-1'));
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await w.tickets({ 'x-api-key': w.testKey }, '?source_ref=sandbox-1')).length, 1);
    assert.equal((await w.tickets({ 'x-api-key': w.liveKey }, '?source_ref=sandbox-1')).length, 0);
    // The test key does not see live integrations, nor the live key test ones.
    const live = await w.call({ 'x-api-key': w.liveKey }, 'GET', '/v1/integrations');
    assert.ok(!live.json<{ integrations: { id: number }[] }>().integrations.some((x) => x.id === i.id));
    assert.equal((await w.call({ 'x-api-key': w.liveKey }, 'DELETE', `/v1/integrations/${i.id}`)).statusCode, 404);
  });
});
