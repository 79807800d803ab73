// Incident subscriptions (issue #37): an org's webhooks for incident events, in the three formats,
// through the outbox (retries, the delivery log), signed and checked as receivers would check them.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { MINUTE } from '../../lib/clock.js';
import { createSenders } from '../../jobs/outbox-senders.js';
import { processDue, type Senders } from '../deliveries/worker.js';
import { listDeliveries, startReceiver, type ReceivedRequest, type Receiver } from '../../../test/peers.js';
import { dispatchWorld, signInAgain, type DispatchWorld, type IncidentView } from '../../../test/world.js';
import { SLACK_DOC_EXAMPLE, TEAMS_DOC_EXAMPLE, slackAnswer, slackProblems, teamsAnswer, teamsProblems } from '../../../test/chat-shapes.js';

interface Sub {
  id: number;
  org_id: number;
  livemode: boolean;
  url: string;
  format: string;
  events: string[];
  secret: string | null;
  description: string | null;
  enabled: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
}
interface Envelope {
  type: string;
  timestamp: string;
  data: { incident: IncidentView & { customer_status_url: string }; event: { type: string; data: Record<string, unknown>; actor: { user_id: number; user_name: string } | null }; links: { incident: string; acknowledge: string } };
}

const ALL = ['incident.created', 'incident.acknowledged', 'incident.assigned', 'incident.escalated', 'incident.resolved', 'incident.reopened', 'incident.reply', 'signal.alert'];
const fieldsOf = (res: { json: () => unknown }) => (res.json() as { details?: { field: string }[] }).details?.map((d) => d.field);

describe('incident subscriptions', () => {
  let w: DispatchWorld;
  let senders: Senders;
  let hooks: Receiver;
  let slack: Receiver;
  let teams: Receiver;
  let seq = 0;

  before(async () => {
    w = await dispatchWorld({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1', WEBHOOK_TIMEOUT_MS: '2000' });
    w.t.clock.set(new Date());
    await signInAgain(w); // the sessions made at the clock's start have ended by the real time
    senders = createSenders(w.t.ctx);
    [hooks, slack, teams] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
  });
  after(async () => {
    await w.close();
    await Promise.all([hooks.close(), slack.close(), teams.close()]);
  });
  beforeEach(async () => {
    // Each test starts without subscriptions (one that failed half-way leaves none behind for the next).
    await w.t.ctx.db.deleteFrom('incident_subscriptions').execute();
    w.t.ctx.events.endAccess({ subscriptionsOf: w.orgId });
    // Receivers check a signature's time against the real clock (standardwebhooks: 5 minutes either way).
    w.t.clock.set(new Date());
    for (const r of [hooks, slack, teams]) r.requests.length = 0;
    hooks.respond = () => ({ status: 204 });
    slack.respond = slackAnswer;
    teams.respond = teamsAnswer;
  });

  const base = () => `/v1/orgs/${w.orgSlug}/webhooks`;
  /** A subscription made by the owner (or with `headers`), at a path of its own on `receiver`. */
  async function subscribe(receiver: Receiver, fields: Record<string, unknown>, headers = w.as(w.owner)): Promise<Sub> {
    seq += 1;
    return w.ok<Sub>(headers, 'POST', base(), { url: `${receiver.origin}/s/${seq}`, events: ALL, format: 'standard', ...fields });
  }
  const drop = (s: Sub, headers = w.as(w.owner)) => w.ok(headers, 'DELETE', `${base()}/${s.id}`);
  const to = (r: Receiver, s: Sub) => r.requests.filter((q) => q.path === new URL(s.url).pathname);
  function verified(r: ReceivedRequest, secret: string): Envelope {
    const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
    return new Webhook(secret).verify(r.text, headers) as Envelope;
  }
  const send = () => processDue(w.t.ctx, senders);
  const subRows = (s: Sub) => w.t.ctx.db.selectFrom('outbox').selectAll().where('recipient', '=', s.url).orderBy('id').execute();

  test('admins and owners manage them: made, listed in their mode, read, changed, deleted; members 403, others 404', async () => {
    const s = await subscribe(hooks, { events: ['incident.created', 'incident.resolved'], description: ' Ops automation ' });
    assert.match(s.secret ?? '', /^whsec_[A-Za-z0-9+/=]+$/);
    assert.deepEqual([s.livemode, s.format, s.events, s.description, s.enabled], [true, 'standard', ['incident.created', 'incident.resolved'], 'Ops automation', true]);
    const chat = await subscribe(slack, { format: 'chat' }, w.as(w.admin));
    assert.equal(chat.secret, null, 'chat receivers are not signed');

    const listed = await w.ok<{ data: Sub[] }>(w.as(w.admin), 'GET', base());
    assert.deepEqual(listed.data.map((x) => x.id), [s.id, chat.id]);
    assert.deepEqual((await w.ok<{ data: Sub[] }>(w.testKey, 'GET', base())).data, [], 'a test key sees the test mode only');
    assert.equal((await w.call(w.testKey, 'GET', `${base()}/${s.id}`)).statusCode, 404);
    assert.equal((await w.ok<Sub>(w.as(w.owner), 'GET', `${base()}/${s.id}`)).url, s.url);

    for (const [method, url, payload] of [
      ['GET', base(), undefined],
      ['POST', base(), { url: 'https://hooks.example.com/x', events: ['incident.created'], format: 'chat' }],
      ['GET', `${base()}/${s.id}`, undefined],
      ['PATCH', `${base()}/${s.id}`, { events: ['incident.reply'] }],
      ['DELETE', `${base()}/${s.id}`, undefined],
      ['POST', `${base()}/${s.id}/test`, undefined],
    ] as const) {
      assert.equal((await w.call(w.as(w.ann), method, url, payload)).statusCode, 403, `a member: ${method} ${url}`);
      assert.equal((await w.call(w.as(w.stranger), method, url, payload)).statusCode, 404, `a stranger: ${method} ${url}`);
    }

    const changed = await w.ok<Sub>(w.as(w.owner), 'PATCH', `${base()}/${s.id}`, { events: ['incident.reply'], description: null });
    assert.deepEqual([changed.events, changed.description, changed.secret], [['incident.reply'], null, s.secret]);
    const toChat = await w.ok<Sub>(w.as(w.owner), 'PATCH', `${base()}/${s.id}`, { format: 'teams' });
    assert.equal(toChat.secret, null, 'teams: no secret');
    const back = await w.ok<Sub>(w.as(w.owner), 'PATCH', `${base()}/${s.id}`, { format: 'standard' });
    assert.match(back.secret ?? '', /^whsec_/, 'standard again: a new secret');
    assert.notEqual(back.secret, s.secret);
    assert.deepEqual(await drop(s), { id: s.id, deleted: true });
    assert.equal((await w.call(w.as(w.owner), 'GET', `${base()}/${s.id}`)).statusCode, 404);
    await drop(chat);
  });

  test('bad input is a 422 naming the field: unknown event or format, no events, a secret for chat, a weak secret', async () => {
    const post = (payload: Record<string, unknown>) => w.call(w.as(w.owner), 'POST', base(), { url: 'https://hooks.example.com/x', events: ['incident.created'], format: 'standard', ...payload });
    const cases: [Record<string, unknown>, string][] = [
      [{ events: ['incident.deleted'] }, 'events.0'],
      [{ events: ['incident.created', 'incident.exploded'] }, 'events.1'],
      [{ events: [] }, 'events'],
      [{ events: ['incident.created', 'incident.created'] }, 'events'],
      [{ format: 'discord' }, 'format'],
      [{ url: 'ftp://hooks.example.com/x' }, 'url'],
      [{ format: 'chat', secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` }, 'secret'],
      [{ secret: `whsec_${Buffer.alloc(8, 1).toString('base64')}` }, 'secret'],
      [{ secret: 'not-a-secret' }, 'secret'],
    ];
    for (const [payload, field] of cases) {
      const res = await post(payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.ok(fieldsOf(res)?.includes(field), `${JSON.stringify(payload)} names ${field}: ${res.body}`);
    }
    const own = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const res = await post({ secret: own });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json<Sub>().secret, own, 'a secret of its own is kept');
    await drop(res.json());
  });

  test('standard: every event, signed per Standard Webhooks, {type, timestamp, data} with the incident as the API shows it', async () => {
    const s = await subscribe(hooks, {});
    const other = await subscribe(hooks, { events: ['incident.resolved'] });
    const policy = await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/escalation-policies`, {
      name: `Two levels ${seq}`,
      levels: [
        { delay_minutes: 5, targets: [{ type: 'user', id: w.ann.id }] },
        { delay_minutes: 5, targets: [{ type: 'user', id: w.ben.id }] },
      ],
    });
    const incident = await w.incident(w.as(w.owner), { title: 'Water main burst', priority: 'urgent', escalation_policy_id: policy.id });
    // Level 1 fires right after the commit (the paging run it wakes): let it finish, so the escalation by hand is level 2.
    await w.t.ctx.escalation.idle();
    await w.ok(w.as(w.owner), 'POST', `/v1/tickets/${incident.Id}/escalate`, undefined, 200);
    await w.ok(w.as(w.ann), 'POST', `/v1/tickets/${incident.Id}/acknowledge`, undefined, 200);
    await w.ok(w.as(w.owner), 'POST', `/v1/tickets/${incident.Id}/replies`, { body: 'Internal: valve 4 is stuck', public: false });
    await w.ok(w.as(w.owner), 'POST', `/v1/tickets/${incident.Id}/replies`, { body: 'Crews are on site.', public: true });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'resolved' });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'closed' });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'open' });
    await w.ok(w.as(w.ann), 'POST', '/v1/signals', { type: 'alert', note: 'Man down at pump 3\nsend help', org_id: w.orgId });
    await send();

    const got = to(hooks, s).map((r) => ({ r, body: verified(r, s.secret!) }));
    const alertIncident = got.find((g) => g.body.type === 'signal.alert')!.body.data.incident;
    assert.deepEqual(
      got.map((g) => `${g.body.type} #${g.body.data.incident.Id}`).sort(),
      [
        `incident.created #${incident.Id}`,
        `incident.escalated #${incident.Id}`,
        `incident.acknowledged #${incident.Id}`,
        `incident.assigned #${incident.Id}`,
        `incident.reply #${incident.Id}`,
        `incident.resolved #${incident.Id}`,
        `incident.reopened #${incident.Id}`,
        `incident.created #${alertIncident.Id}`,
        `signal.alert #${alertIncident.Id}`,
      ].sort(),
      'one each; the internal reply and resolved→closed send nothing',
    );
    for (const { r, body } of got) {
      assert.deepEqual(Object.keys(body).sort(), ['data', 'timestamp', 'type']);
      assert.match(String(r.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
      assert.match(String(r.headers['content-type']), /^application\/json/);
      assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
      assert.equal(body.data.incident.livemode, true);
      assert.equal(body.data.links.incident, `http://muster.test/app/incidents/${body.data.incident.Id}`);
      assert.equal(body.data.links.acknowledge, `http://muster.test/field#incident-${body.data.incident.Id}`);
    }
    assert.equal(new Set(got.map((g) => g.r.headers['webhook-id'])).size, got.length, 'one webhook-id per message');
    // Deliveries due together are sent concurrently: find each by its type and incident, not by order.
    const of = (type: string, id = incident.Id) => got.find((g) => g.body.type === type && g.body.data.incident.Id === id)!.body.data;
    assert.equal(of('incident.created').incident.title, 'Water main burst');
    assert.equal(of('incident.escalated').event.data.level, 2);
    assert.equal(of('incident.acknowledged').event.actor?.user_id, w.ann.id);
    assert.equal(of('incident.assigned').incident.assignee_id, w.ann.id);
    assert.equal(of('incident.reply').event.data.body, 'Crews are on site.');
    assert.equal(of('incident.resolved').incident.status, 'resolved');
    assert.deepEqual(of('incident.reopened').event.data, { from: 'closed', to: 'open' });
    assert.equal(of('signal.alert', alertIncident.Id).event.data.note, 'Man down at pump 3\nsend help');
    // The signature covers the body and the secret.
    const first = got[0]!.r;
    assert.throws(() => verified({ ...first, text: first.text.replace('incident', 'incidenT') }, s.secret!));
    assert.throws(() => verified(first, other.secret!));
    // The narrower subscription got only its one event.
    assert.deepEqual(to(hooks, other).map((r) => verified(r, other.secret!).type), ['incident.resolved']);
    await drop(s);
    await drop(other);
  });

  test('chat: a Slack incoming-webhook message (text and blocks) the stand-in takes, answering ok', async () => {
    assert.deepEqual(slackProblems(SLACK_DOC_EXAMPLE), [], "the checker takes the documentation's own example");
    assert.ok(slackProblems({ blocks: [] }).length > 0, 'and refuses a message without text');
    assert.ok(slackProblems({ text: 'x', blocks: [{ type: 'header', text: { type: 'mrkdwn', text: 'x' } }] }).length > 0, 'and a header in mrkdwn');
    const s = await subscribe(slack, { format: 'chat', events: ['incident.created', 'incident.assigned'] });
    const incident = await w.incident(w.as(w.owner), { title: 'Tree <on> the line & road', priority: 'high', description: 'Blocking Elm Street' });
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { assignee_id: w.ben.id });
    await send();
    // Deliveries due together are sent concurrently: tell the two posts apart by what they say.
    const posts = to(slack, s);
    assert.equal(posts.length, 2, 'two posts');
    const created = posts.find((r) => r.text.includes('New high incident'))!;
    const assigned = posts.find((r) => r.text.includes('assigned to'))!;
    assert.ok(created && assigned);
    assert.equal(created.headers['webhook-signature'], undefined, 'not signed');
    const link = `<http://muster.test/app/incidents/${incident.Id}|Open incident #${incident.Id}>  ·  <http://muster.test/field#incident-${incident.Id}|Acknowledge>`;
    assert.deepEqual(JSON.parse(created.text), {
      text: `New high incident #${incident.Id}: Tree &lt;on&gt; the line &amp; road\nPriority: high · Status: open · Assignee: Unassigned\nBlocking Elm Street\n${link}`,
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: `New high incident #${incident.Id}: Tree <on> the line & road`, emoji: false } },
        {
          type: 'section',
          fields: [
            { type: 'mrkdwn', text: '*Priority*\nhigh' },
            { type: 'mrkdwn', text: '*Status*\nopen' },
            { type: 'mrkdwn', text: '*Assignee*\nUnassigned' },
          ],
        },
        { type: 'section', text: { type: 'mrkdwn', text: 'Blocking Elm Street' } },
        { type: 'section', text: { type: 'mrkdwn', text: link } },
      ],
    });
    const a = JSON.parse(assigned.text) as { text: string; blocks: unknown[] };
    assert.deepEqual(slackProblems(a), []);
    assert.match(a.text, new RegExp(`^Incident #${incident.Id} assigned to Ben Responder: Tree`));
    assert.ok(a.text.includes('Assignee: Ben Responder'));
    const rows = await subRows(s);
    assert.deepEqual(rows.map((r) => r.status), ['sent', 'sent'], 'Slack answered ok');
    await drop(s);
  });

  test('teams: an Adaptive Card message as Microsoft documents it, taken by the stand-in (202)', async () => {
    assert.deepEqual(teamsProblems(TEAMS_DOC_EXAMPLE), [], "the checker takes the documentation's own example");
    assert.ok(teamsProblems({ ...TEAMS_DOC_EXAMPLE, type: 'card' }).length > 0, 'and refuses another type');
    const submit = structuredClone(TEAMS_DOC_EXAMPLE) as { attachments: { content: Record<string, unknown> }[] };
    submit.attachments[0]!.content.actions = [{ type: 'Action.Submit', title: 'x' }];
    assert.ok(teamsProblems(submit).length > 0, 'and Action.Submit, which webhooks do not support');
    const s = await subscribe(teams, { format: 'teams', events: ['incident.reply'] });
    const incident = await w.incident(w.as(w.owner), { title: 'Gas smell', priority: 'urgent' });
    await w.ok(w.as(w.admin), 'POST', `/v1/tickets/${incident.Id}/replies`, { body: 'Area evacuated.', public: true });
    await send();
    const [r] = to(teams, s);
    assert.ok(r);
    assert.deepEqual(JSON.parse(r.text), {
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          contentUrl: null,
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            type: 'AdaptiveCard',
            version: '1.2',
            body: [
              { type: 'TextBlock', text: `Reply on incident #${incident.Id} by Adam Admin: Gas smell`, weight: 'Bolder', size: 'Medium', wrap: true },
              {
                type: 'FactSet',
                facts: [
                  { title: 'Priority', value: 'urgent' },
                  { title: 'Status', value: 'open' },
                  { title: 'Assignee', value: 'Unassigned' },
                ],
              },
              { type: 'TextBlock', text: 'Area evacuated.', wrap: true },
            ],
            actions: [
              { type: 'Action.OpenUrl', title: `Open incident #${incident.Id}`, url: `http://muster.test/app/incidents/${incident.Id}` },
              { type: 'Action.OpenUrl', title: 'Acknowledge', url: `http://muster.test/field#incident-${incident.Id}` },
            ],
          },
        },
      ],
    });
    assert.deepEqual((await subRows(s)).map((x) => [x.status, x.topic]), [['sent', 'incident.reply']]);
    await drop(s);
  });

  test('retries as the booking webhooks: failing twice then answering, three attempts with one webhook-id, after 5 s and 5 min; in the delivery log', async () => {
    w.t.clock.set(new Date(Date.now() - 4 * MINUTE)); // the attempts span about 5 minutes: keep them near the real time
    const s = await subscribe(hooks, { events: ['incident.created'] });
    let calls = 0;
    hooks.respond = (r) => (r.path !== new URL(s.url).pathname ? { status: 204 } : ++calls <= 2 ? { status: 500, body: 'boom' } : { status: 200, body: 'ok' });
    await w.incident(w.as(w.owner), { title: 'Flaky receiver' });
    await send();
    const mine = async () => (await listDeliveries(w.t.app, w.as(w.owner))).filter((d) => d.recipient === s.url);
    let [d] = await mine();
    assert.equal(d?.status, 'pending');
    assert.equal(d?.kind, 'webhook');
    assert.equal(d?.topic, 'incident.created');
    w.t.clock.advance(4_000);
    await send();
    assert.equal(to(hooks, s).length, 1, 'not before 5 s');
    w.t.clock.advance(2_000);
    await send();
    w.t.clock.advance(4 * MINUTE);
    await send();
    assert.equal(to(hooks, s).length, 2, 'not before 5 min');
    w.t.clock.advance(2 * MINUTE);
    await send();
    const reqs = to(hooks, s);
    assert.equal(reqs.length, 3);
    assert.equal(new Set(reqs.map((r) => r.headers['webhook-id'])).size, 1, 'the same webhook-id on every attempt');
    for (const r of reqs) verified(r, s.secret!);
    [d] = await mine();
    assert.deepEqual(d?.attempt_log.map((a) => [a.attempt, a.outcome, a.status_code]), [
      [1, 'failed', 500],
      [2, 'failed', 500],
      [3, 'sent', 200],
    ]);
    await drop(s);
  });

  test('a 410 turns the subscription off and stops; nothing more is queued until it is turned on again', async () => {
    const s = await subscribe(slack, { format: 'chat', events: ['incident.created'] });
    slack.respond = () => ({ status: 410, body: 'channel_is_archived' });
    await w.incident(w.as(w.owner), { title: 'Archived room' });
    await send();
    const [d] = await subRows(s);
    assert.equal(d?.status, 'failed');
    assert.equal(d?.attempts, 1);
    const off = await w.ok<Sub>(w.as(w.owner), 'GET', `${base()}/${s.id}`);
    assert.deepEqual([off.enabled, off.disabled_reason], [false, '410 Gone from the receiver']);
    w.t.clock.advance(2 * 24 * 60 * MINUTE);
    assert.equal(await send(), 0, 'no retry');
    await w.incident(w.as(w.owner), { title: 'While off' });
    assert.equal((await subRows(s)).length, 1, 'nothing queued while off');
    w.t.clock.set(new Date());
    slack.respond = slackAnswer;
    assert.equal((await w.ok<Sub>(w.as(w.owner), 'PATCH', `${base()}/${s.id}`, { enabled: true })).enabled, true);
    await w.incident(w.as(w.owner), { title: 'Back on' });
    await send();
    assert.deepEqual((await subRows(s)).map((r) => r.status), ['failed', 'sent']);
    await drop(s);
  });

  test('test mode: a test key’s subscription gets the test incidents only, delivered (webhooks are sent in test mode), livemode false', async () => {
    const live = await subscribe(hooks, { events: ['incident.created'] });
    const sandbox = await subscribe(hooks, { events: ['incident.created'] }, w.testKey);
    assert.equal(sandbox.livemode, false);
    const t = await w.incident(w.testKey, { title: 'Sandbox drill' });
    await w.incident(w.as(w.owner), { title: 'Live one' });
    await send();
    const sb = to(hooks, sandbox).map((r) => verified(r, sandbox.secret!));
    assert.deepEqual(sb.map((b) => [b.data.incident.Id, b.data.incident.livemode]), [[t.Id, false]]);
    assert.deepEqual(to(hooks, live).map((r) => verified(r, live.secret!).data.incident.title), ['Live one']);
    assert.deepEqual((await subRows(sandbox)).map((r) => [r.livemode, r.status]), [[0, 'sent']]);
    await drop(live);
    await drop(sandbox, w.testKey);
  });

  test('"send test" posts a webhook.test event now and answers what the receiver answered', async () => {
    const s = await subscribe(hooks, { events: ['incident.created', 'incident.resolved'] });
    hooks.respond = () => ({ status: 200, body: 'thanks' });
    const ok = await w.ok(w.as(w.admin), 'POST', `${base()}/${s.id}/test`, undefined, 200);
    assert.deepEqual(ok, { delivered: true, status_code: 200, error: null, body: 'thanks' });
    const body = verified(to(hooks, s)[0]!, s.secret!) as unknown as { type: string; data: { subscription_id: number; events: string[] } };
    assert.deepEqual([body.type, body.data], ['webhook.test', { subscription_id: s.id, events: ['incident.created', 'incident.resolved'] }]);
    hooks.respond = () => ({ status: 500, body: 'down' });
    assert.deepEqual(await w.ok(w.as(w.admin), 'POST', `${base()}/${s.id}/test`, undefined, 200), { delivered: false, status_code: 500, error: 'HTTP 500', body: 'down' });

    const chat = await subscribe(slack, { format: 'chat', events: ['incident.created'] });
    assert.deepEqual(await w.ok(w.as(w.owner), 'POST', `${base()}/${chat.id}/test`, undefined, 200), { delivered: true, status_code: 200, error: null, body: 'ok' });
    assert.deepEqual(slackProblems(JSON.parse(to(slack, chat)[0]!.text)), []);
    const card = await subscribe(teams, { format: 'teams', events: ['incident.created'] });
    assert.deepEqual(await w.ok(w.as(w.owner), 'POST', `${base()}/${card.id}/test`, undefined, 200), { delivered: true, status_code: 202, error: null, body: '' });
    assert.equal((await w.t.ctx.db.selectFrom('outbox').select('id').where('topic', '=', 'webhook.test').execute()).length, 0, 'not queued: once, now');
    for (const x of [s, chat, card]) await drop(x);
  });
});
