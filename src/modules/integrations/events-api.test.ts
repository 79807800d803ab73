import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { pdFollowUp, pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';

describe('PagerDuty Events API v2', () => {
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

  test('trigger twice then resolve: one incident, repeated once, resolved', async () => {
    const url = w.path(i.events_url);
    const first = await w.call({}, 'POST', url, pdTrigger('', 'disk-full-1', 'critical'));
    assert.equal(first.statusCode, 202, first.body);
    assert.deepEqual(first.json(), { status: 'success', message: 'Event processed', dedup_key: 'disk-full-1' });
    assert.equal((await w.call({}, 'POST', url, pdTrigger('', 'disk-full-1', 'critical'))).statusCode, 202);
    assert.equal((await w.call({}, 'POST', url, pdFollowUp('', 'disk-full-1', 'resolve'))).statusCode, 202);
    const tickets = await w.tickets(live(), '?source_ref=disk-full-1');
    assert.equal(tickets.length, 1);
    const [ticket] = tickets;
    assert.equal(ticket!.status, 'resolved');
    assert.equal(ticket!.priority, 'urgent');
    assert.equal(ticket!.source, 'alert');
    assert.equal(ticket!.title, 'Example alert on host1.example.com');
    assert.match(ticket!.description ?? '', /Component: postgres/);
    const events = await w.timelineTypes(ticket!.Id);
    assert.deepEqual(events.map((e) => e.type), ['created', 'alert_repeated', 'status_changed']);
    assert.equal(events[1]!.data.count, 2);
    // The list's total agrees with the counters (resolved through the incidents service).
    const resolved = await w.call(live(), 'GET', '/v1/tickets?status=resolved');
    assert.equal(resolved.json<{ total: number }>().total, 1);
  });

  test('acknowledging an incident already in progress is broadcast as incident.updated, as a responder acknowledging is', async () => {
    const url = w.path(i.events_url);
    await w.call({}, 'POST', url, pdTrigger('', 'ack-busy'));
    const [ticket] = await w.tickets(live(), '?source_ref=ack-busy');
    assert.equal((await w.call(live(), 'PATCH', `/v1/tickets/${ticket!.Id}`, { status: 'in_progress' })).statusCode, 200);
    const updates: { acknowledged_at: string | null }[] = [];
    const stop = t.ctx.events.bus.subscribe((e) => {
      const p = e.payload as { Id?: number; acknowledged_at: string | null };
      if (e.type === 'incident.updated' && p.Id === ticket!.Id) updates.push(p);
    });
    try {
      assert.equal((await w.call({}, 'POST', url, pdFollowUp('', 'ack-busy', 'acknowledge'))).statusCode, 202);
    } finally {
      stop();
    }
    // One acknowledgement path (modules/incidents): the acknowledgement changes the incident's view,
    // so it is broadcast (published when the transaction commits, before the answer).
    assert.equal(updates.length, 1);
    assert.ok(updates[0]!.acknowledged_at);
    const events = await w.timelineTypes(ticket!.Id);
    assert.deepEqual(events.map((e) => e.type), ['created', 'status_changed', 'acknowledged']);
  });

  test('a trigger after resolution opens a new incident', async () => {
    const url = w.path(i.events_url);
    await w.call({}, 'POST', url, pdTrigger('', 'flap-1'));
    await w.call({}, 'POST', url, pdFollowUp('', 'flap-1', 'resolve'));
    await w.call({}, 'POST', url, pdTrigger('', 'flap-1'));
    const tickets = await w.tickets(live(), '?source_ref=flap-1');
    assert.deepEqual(tickets.map((x) => x.status), ['open', 'resolved']);
  });

  test('acknowledge puts the open incident in progress with an acknowledged event; unknown keys are dropped', async () => {
    const url = w.path(i.events_url);
    await w.call({}, 'POST', url, pdTrigger('', 'ack-1'));
    const ack = await w.call({}, 'POST', url, pdFollowUp('', 'ack-1', 'acknowledge'));
    assert.equal(ack.statusCode, 202, ack.body);
    const [ticket] = await w.tickets(live(), '?source_ref=ack-1');
    assert.equal(ticket!.status, 'in_progress');
    // Acknowledged as the dispatch acknowledgement is (which stops escalation), by no user.
    const shown = ticket as unknown as { acknowledged_at: string | null; acknowledged_by: number | null };
    assert.ok(shown.acknowledged_at);
    assert.equal(shown.acknowledged_by, null);
    const events = await w.timelineTypes(ticket!.Id);
    assert.deepEqual(events.map((e) => e.type), ['created', 'acknowledged', 'status_changed']);
    assert.equal(events[1]!.data.source, 'integration');
    // A repeat while in progress still appends, it does not open another.
    await w.call({}, 'POST', url, pdTrigger('', 'ack-1'));
    assert.equal((await w.tickets(live(), '?source_ref=ack-1')).length, 1);
    const nothing = await w.call({}, 'POST', url, pdFollowUp('', 'never-triggered', 'resolve'));
    assert.equal(nothing.statusCode, 202);
    assert.equal((await w.tickets(live(), '?source_ref=never-triggered')).length, 0);
  });

  test('without a dedup_key a fresh one is generated and answered', async () => {
    const res = await w.call({}, 'POST', w.path(i.events_url), pdTrigger('', undefined));
    assert.equal(res.statusCode, 202, res.body);
    const { dedup_key } = res.json<{ dedup_key: string }>();
    assert.match(dedup_key, /^[0-9a-f-]{36}$/);
    assert.equal((await w.tickets(live(), `?source_ref=${dedup_key}`)).length, 1);
  });

  test('/v2/enqueue takes the integration key as routing_key', async () => {
    const res = await w.call({}, 'POST', '/v2/enqueue', pdTrigger(i.key, 'enqueue-1', 'error'));
    assert.equal(res.statusCode, 202, res.body);
    const [ticket] = await w.tickets(live(), '?source_ref=enqueue-1');
    assert.equal(ticket!.priority, 'high');
    const wrong = await w.call({}, 'POST', '/v2/enqueue', pdTrigger('R0UTINGKEYTHATDOESNOTEXIST000000', 'enqueue-2'));
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json<{ status: string; code: string }>().code, 'unauthorized');
    const missing = await w.call({}, 'POST', '/v2/enqueue', { event_action: 'trigger', payload: pdTrigger('', 'x').payload });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json<{ status: string }>().status, 'invalid event');
  });

  test("invalid events answer 400 in PagerDuty's shape; oversize 413; never a silent 202", async () => {
    const url = w.path(i.events_url);
    const bad = (payload: unknown) => w.call({}, 'POST', url, payload);
    const noSummary = pdTrigger('', 'bad-1');
    const { summary: _drop, ...rest } = noSummary.payload;
    for (const [name, payload] of [
      ['no summary', { ...noSummary, payload: rest }],
      ['bad severity', pdTrigger('', 'bad-2', 'disaster')],
      ['bad action', { ...pdTrigger('', 'bad-3'), event_action: 'explode' }],
      ['trigger without payload', { event_action: 'trigger', dedup_key: 'bad-4' }],
      ['resolve without dedup_key', { event_action: 'resolve' }],
      ['dedup_key over 255', pdTrigger('', 'k'.repeat(256))],
    ] as const) {
      const res = await bad(payload);
      assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
      const b = res.json<{ status: string; message: string; errors: string[]; error: string }>();
      assert.equal(b.status, 'invalid event', name);
      assert.equal(b.message, 'Event object is invalid', name);
      assert.ok(b.errors.length > 0 && typeof b.error === 'string', name);
    }
    const malformed = await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{"event_action":' });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json<{ status: string }>().status, 'invalid event');
    const huge = pdTrigger('', 'huge-1');
    const big = await w.call({}, 'POST', url, { ...huge, payload: { ...huge.payload, custom_details: { blob: 'x'.repeat(600 * 1024) } } });
    assert.equal(big.statusCode, 413);
    assert.equal((await w.tickets(live(), '?source_ref=huge-1')).length, 0);
  });

  test('POST /v1/tickets with a source_ref follows the same rule: 201 new, 200 with the open one', async () => {
    const first = await w.call(live(), 'POST', '/v1/tickets', { title: 'Printer on fire', source_ref: 'ticket-ref-1' });
    assert.equal(first.statusCode, 201, first.body);
    const again = await w.call(live(), 'POST', '/v1/tickets', { title: 'Printer still on fire', source_ref: 'ticket-ref-1' });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json<{ Id: number }>().Id, first.json<{ Id: number }>().Id);
    const events = await w.timelineTypes(first.json<{ Id: number }>().Id);
    assert.deepEqual(events.map((e) => [e.type, e.data.count]), [['created', undefined], ['alert_repeated', 2]]);
    const list = await w.call(live(), 'GET', '/v1/tickets?source_ref=ticket-ref-1');
    assert.equal(list.json<{ total: number }>().total, 1);
  });

  test('reopening a resolved incident whose ref another open incident holds is 409, not 500', async () => {
    const a = await w.call(live(), 'POST', '/v1/tickets', { title: 'A', source_ref: 'reopen-1' });
    const id = a.json<{ Id: number }>().Id;
    assert.equal((await w.call(live(), 'PATCH', `/v1/tickets/${id}`, { status: 'resolved' })).statusCode, 200);
    assert.equal((await w.call(live(), 'POST', '/v1/tickets', { title: 'B', source_ref: 'reopen-1' })).statusCode, 201);
    const reopen = await w.call(live(), 'PATCH', `/v1/tickets/${id}`, { status: 'open' });
    assert.equal(reopen.statusCode, 409, reopen.body);
  });
});
