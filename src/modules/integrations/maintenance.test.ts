import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { alertmanagerMessage, pdFollowUp, pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type IntegrationsWorld } from '../../../test/world.js';
import { DAY, HOUR, MINUTE } from '../../lib/clock.js';
import { checkHeartbeats, HEARTBEAT_TICK_MS } from './index.js';

interface Window {
  id: number;
  start: string;
  end: string;
  description: string | null;
  integration_ids: number[] | null;
  active: boolean;
}

describe('maintenance windows', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let base: string;
  let policyId: number;
  const live = () => ({ 'x-api-key': w.liveKey });
  const at = (ms: number) => new Date(t.clock.nowMs() + ms).toISOString();
  before(async () => {
    t = await buildTestApp();
    w = await integrationsWorld(t);
    const [org] = (await w.call(live(), 'GET', '/v1/orgs')).json<{ orgs: { slug: string }[] }>().orgs;
    base = `/v1/orgs/${org!.slug}/maintenance-windows`;
    const policy = await w.call(live(), 'POST', `/v1/orgs/${org!.slug}/escalation-policies`, { name: 'Ops', levels: [{ delay_minutes: 5, targets: [{ type: 'user', id: w.owner.id }] }] });
    policyId = policy.json<{ id: number }>().id;
    await checkHeartbeats(t.ctx); // the checker's first run in this instance
  });
  after(() => t.close());

  const create = async (fields: object, status = 201, headers: Record<string, string> = live()) => {
    const res = await w.call(headers, 'POST', base, fields);
    assert.equal(res.statusCode, status, res.body);
    return res.json<Window & { details?: { field: string }[] }>();
  };
  const list = async (query = '') => (await w.call(live(), 'GET', `${base}${query}`)).json<{ maintenance_windows: Window[] }>().maintenance_windows;
  const log = async (i: { id: number }) => (await w.call(live(), 'GET', `/v1/integrations/${i.id}/events`)).json<{ events: { outcome: string; reason: string | null; incident_id: number | null; alerts: { outcome: string }[] | null }[] }>().events;
  const pages = async () => Number((await t.ctx.db.selectFrom('paging_pages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  test('planned, listed, changed and ended; bad windows answer 422 naming the field', async () => {
    const i = await w.integration();
    const now = await create({ start: at(-MINUTE), end: at(HOUR), description: 'Router swap' });
    assert.deepEqual([now.active, now.integration_ids, now.description], [true, null, 'Router swap']);
    const later = await create({ start: at(DAY), end: at(DAY + 2 * HOUR), integration_ids: [i.id] });
    assert.equal(later.active, false);
    for (const [fields, field] of [
      [{ start: at(HOUR), end: at(HOUR) }, 'end'],
      [{ start: at(HOUR), end: at(0) }, 'end'],
      [{ start: at(0), end: at(31 * DAY + 1) }, 'end'],
      [{ start: at(0), end: at(HOUR), integration_ids: [999_999] }, 'integration_ids'],
    ] as const) {
      const bad = await create(fields, 422);
      assert.deepEqual(bad.details?.map((d) => d.field), [field], JSON.stringify(fields));
    }
    // Another org's integration, or one of the other mode: not this window's to cover.
    const testOne = await w.integration({ 'x-api-key': w.testKey });
    assert.deepEqual((await create({ start: at(0), end: at(HOUR), integration_ids: [testOne.id] }, 422)).details?.map((d) => d.field), ['integration_ids']);
    // Members read them (the incidents page shows the active one); only admins and owners plan them.
    assert.equal((await w.call({ cookie: w.member.cookie }, 'GET', base)).statusCode, 200);
    await create({ start: at(0), end: at(HOUR) }, 403, { cookie: w.member.cookie });

    assert.deepEqual((await list()).map((x) => x.id), [now.id, later.id], 'current and upcoming');
    assert.deepEqual((await list(`?from=${at(2 * HOUR)}&to=${at(DAY + HOUR)}`)).map((x) => x.id), [later.id]);
    const patched = await w.call(live(), 'PATCH', `${base}/${later.id}`, { end: at(DAY + HOUR), integration_ids: null });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual([patched.json<Window>().end, patched.json<Window>().integration_ids], [at(DAY + HOUR), null]);
    assert.equal((await w.call(live(), 'PATCH', `${base}/${later.id}`, { start: at(DAY + 2 * HOUR) })).statusCode, 422);

    // Deleting an active window ends it now; one not begun is gone.
    const ended = await w.call(live(), 'DELETE', `${base}/${now.id}`);
    assert.deepEqual([ended.json<Window & { deleted: boolean }>().deleted, ended.json<Window>().end, ended.json<Window>().active], [false, at(0), false]);
    const gone = await w.call(live(), 'DELETE', `${base}/${later.id}`);
    assert.equal(gone.json<{ deleted: boolean }>().deleted, true);
    assert.deepEqual(await list(), []);
    assert.equal((await w.call(live(), 'DELETE', `${base}/${later.id}`)).statusCode, 404);
  });

  test('during a window: events answered as usual, logged suppressed; no open, no repeat, no page; an earlier incident still resolves', async () => {
    const i = await w.integration(undefined, { escalation_policy_id: policyId });
    const other = await w.integration(undefined, { name: 'Not covered', escalation_policy_id: policyId });
    const url = w.path(i.events_url);
    const am = w.path(i.alertmanager_url);
    await w.call({}, 'POST', url, pdTrigger('', 'before-1', 'critical'));
    await w.call({}, 'POST', am, alertmanagerMessage([{ name: 'web-1', fingerprint: 'fp-before', status: 'firing' }]));
    const [before1] = await w.tickets(live(), '?source_ref=before-1');
    await t.ctx.escalation.idle();
    const repeats = async () => (await w.timelineTypes(before1!.Id)).filter((e) => e.type === 'alert_repeated').length;
    assert.equal(await repeats(), 0);
    const pagesBefore = await pages();

    const window = await create({ start: at(0), end: at(HOUR), integration_ids: [i.id] });
    const opened = await w.call({}, 'POST', url, pdTrigger('', 'during-1', 'critical'));
    assert.equal(opened.statusCode, 202, opened.body);
    assert.deepEqual(opened.json(), { status: 'success', message: 'Event processed', dedup_key: 'during-1' });
    assert.equal((await w.call({}, 'POST', url, pdTrigger('', 'before-1', 'critical'))).statusCode, 202);
    const amRes = await w.call({}, 'POST', am, alertmanagerMessage([{ name: 'web-2', fingerprint: 'fp-during', status: 'firing' }, { name: 'web-1', fingerprint: 'fp-before', status: 'resolved' }]));
    assert.deepEqual(amRes.json<{ alerts: { action: string }[] }>().alerts.map((a) => a.action), ['suppressed', 'resolved']);
    assert.equal((await w.call({}, 'POST', w.path(other.events_url), pdTrigger('', 'elsewhere-1', 'critical'))).statusCode, 202);
    await t.ctx.escalation.idle();

    assert.equal((await w.tickets(live(), '?source_ref=during-1')).length, 0, 'no incident opened');
    assert.equal((await w.tickets(live(), '?source_ref=fp-during')).length, 0);
    assert.equal(await repeats(), 0, 'no repeat added');
    assert.deepEqual((await w.tickets(live(), '?source_ref=fp-before')).map((x) => x.status), ['resolved'], 'a resolve of an incident opened before still resolves');
    assert.equal((await w.tickets(live(), '?source_ref=elsewhere-1')).length, 1, 'an integration the window does not cover opens as usual');
    assert.equal(await pages(), pagesBefore + 1, 'only the uncovered integration paged');
    assert.equal((await w.call({}, 'POST', url, pdFollowUp('', 'before-1', 'resolve'))).statusCode, 202);
    assert.deepEqual((await w.tickets(live(), '?source_ref=before-1')).map((x) => x.status), ['resolved']);
    const entries = await log(i);
    // Newest first: the resolve; the notification (its resolve, its suppressed alert); the repeat and the open, suppressed; the two opened before.
    assert.deepEqual(entries.map((e) => e.outcome), ['resolved', 'resolved', 'suppressed', 'suppressed', 'opened', 'opened']);
    assert.deepEqual(entries[1]!.alerts?.map((a) => a.outcome), ['suppressed', 'resolved']);
    for (const e of entries.slice(1, 4)) assert.equal(e.reason, `maintenance window ${window.id}`);

    // After the window, the alert still firing opens its incident at its next repeat.
    t.clock.advance(HOUR);
    await w.call({}, 'POST', url, pdTrigger('', 'during-1', 'critical'));
    assert.deepEqual((await w.tickets(live(), '?source_ref=during-1')).map((x) => x.status), ['open']);
  });

  test('a heartbeat missed during a window opens nothing (logged once); silent after it, it is down', async () => {
    const hb = await w.call(live(), 'POST', '/v1/integrations', { name: 'Backup', type: 'heartbeat', interval_seconds: 60, escalation_policy_id: policyId });
    const h = hb.json<{ id: number; key: string }>();
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/integrations/${h.key}/heartbeat` })).statusCode, 200);
    const window = await create({ start: at(0), end: at(10 * MINUTE) }); // all the org's integrations
    let opened = 0;
    for (let n = 0; n < (10 * MINUTE) / HEARTBEAT_TICK_MS; n++) {
      t.clock.advance(HEARTBEAT_TICK_MS);
      opened += await checkHeartbeats(t.ctx);
    }
    assert.equal(opened, 0);
    assert.equal((await w.tickets(live(), `?source_ref=heartbeat:${h.id}`)).length, 0);
    assert.deepEqual((await log(h)).map((e) => [e.outcome, e.reason]), [['suppressed', `missed during maintenance window ${window.id}`]]);
    for (let n = 0; n < 60_000 / HEARTBEAT_TICK_MS + 1; n++) {
      t.clock.advance(HEARTBEAT_TICK_MS);
      opened += await checkHeartbeats(t.ctx);
    }
    assert.equal(opened, 1, 'down within an interval of the window ending');
    assert.deepEqual((await w.tickets(live(), `?source_ref=heartbeat:${h.id}`)).map((x) => x.status), ['open']);
  });
});
