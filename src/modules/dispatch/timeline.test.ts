import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';

interface Event {
  id: number;
  incident_id: number;
  type: string;
  at: string;
  actor: { user_id: number; user_name: string } | null;
  data: Record<string, unknown>;
}

describe('incident timeline', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let port: number;
  const streams: SseClient[] = [];
  before(async () => {
    t = await buildTestApp({ SSE_HEARTBEAT_MS: '50' });
    owner = await signUp(t.app, { name: 'Olga Owner' });
    member = await signUp(t.app, { name: 'Milo Member' });
    stranger = await signUp(t.app, { name: 'Stan Stranger' });
    const added = await t.app.inject({ method: 'POST', url: `/v1/orgs/${owner.slug}/members`, headers: { cookie: owner.cookie }, payload: { email: member.email } });
    assert.equal(added.statusCode, 201, added.body);
    port = await listen(t);
  });
  after(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await t.close();
  });

  const as = (u: TestUser): Headers => ({ cookie: u.cookie });
  async function call(headers: Headers, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) {
    return t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  }
  async function timeline(headers: Headers, id: number, base = '/v1/tickets'): Promise<Event[]> {
    const res = await call(headers, 'GET', `${base}/${id}/timeline`);
    assert.equal(res.statusCode, 200, res.body);
    return body<{ events: Event[] }>(res).events;
  }

  test('every change writes one event per cause, oldest first, with its actor', async () => {
    const created = await call(as(owner), 'POST', '/v1/tickets', { title: 'Flooded cellar', priority: 'high' });
    assert.equal(created.statusCode, 201, created.body);
    const id = body<{ Id: number }>(created).Id;
    // One PATCH changing three things writes three events; a PATCH that changes nothing writes none.
    assert.equal((await call(as(owner), 'PATCH', `/v1/tickets/${id}`, { status: 'in_progress', priority: 'urgent', assignee_id: member.id })).statusCode, 200);
    assert.equal((await call(as(owner), 'PATCH', `/v1/tickets/${id}`, { status: 'in_progress' })).statusCode, 200);
    assert.equal((await call(as(member), 'POST', `/v1/tickets/${id}/replies`, { body: 'On my way', public: true })).statusCode, 201);
    assert.equal((await call(as(owner), 'POST', `/v1/tickets/${id}/replies`, { body: 'Check the pump' })).statusCode, 201);
    assert.equal((await call(as(owner), 'PATCH', `/v1/tickets/${id}`, { assignee_id: null })).statusCode, 200);

    const events = await timeline(as(member), id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['created', 'status_changed', 'priority_changed', 'assigned', 'reply', 'reply', 'unassigned'],
    );
    assert.deepEqual(events[0]?.data, { title: 'Flooded cellar', priority: 'high', source: 'api' });
    assert.deepEqual(events[1]?.data, { from: 'open', to: 'in_progress' });
    assert.deepEqual(events[2]?.data, { from: 'high', to: 'urgent' });
    assert.deepEqual(events[3]?.data, { assignee_id: member.id, previous_assignee_id: null });
    assert.deepEqual(events[4]?.data, { reply_id: events[4]?.data.reply_id, public: true, body: 'On my way' });
    assert.equal(events[5]?.data.public, false);
    assert.deepEqual(events[6]?.data, { previous_assignee_id: member.id });
    assert.deepEqual(events[4]?.actor, { user_id: member.id, user_name: 'Milo Member' });
    assert.deepEqual(events[0]?.actor, { user_id: owner.id, user_name: 'Olga Owner' });
    const ids = events.map((e) => e.id);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
    // Both paths address the same records.
    assert.deepEqual(await timeline(as(owner), id, '/v1/incidents'), events);
  });

  test('another org and the other mode see 404', async () => {
    const created = await call(as(owner), 'POST', '/v1/tickets', { title: 'Private matter' });
    const id = body<{ Id: number }>(created).Id;
    assert.equal((await call(as(stranger), 'GET', `/v1/tickets/${id}/timeline`)).statusCode, 404);
    const testKey = (await createKey(t.app, owner.cookie, 'test')).key;
    assert.equal((await call({ 'x-api-key': testKey }, 'GET', `/v1/tickets/${id}/timeline`)).statusCode, 404);
    assert.equal((await t.app.inject({ url: `/v1/tickets/${id}/timeline` })).statusCode, 401);
  });

  test('each event is broadcast on the incident stream as incident.timeline, to the org only', async () => {
    const mine = await connectSse(port, '/v1/incidents/stream', as(member));
    const theirs = await connectSse(port, '/v1/incidents/stream', as(stranger));
    streams.push(mine, theirs);
    const created = await call(as(owner), 'POST', '/v1/tickets', { title: 'Downed line' });
    const id = body<{ Id: number }>(created).Id;
    await call(as(owner), 'PATCH', `/v1/tickets/${id}`, { status: 'resolved' });
    const frame = await mine.waitForEvent('incident.timeline', (p) => p.incident_id === id && p.type === 'status_changed');
    assert.deepEqual((frame.data as { payload: Event }).payload.data, { from: 'open', to: 'resolved' });
    await mine.waitForEvent('incident.timeline', (p) => p.incident_id === id && p.type === 'created');
    // The stranger's stream saw the same moment pass without any of it (the heartbeat proves it is alive).
    const seen = theirs.frames.length;
    await theirs.waitFor((f) => f.comment !== undefined && theirs.frames.indexOf(f) >= seen);
    assert.equal(theirs.events.filter((e) => e.type === 'incident.timeline').length, 0);
  });
});
