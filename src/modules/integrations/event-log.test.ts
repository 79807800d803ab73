import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../app.js';
import { buildTestApp, secondInstance, testDialect, type TestApp } from '../../../test/helpers.js';
import { alertmanagerMessage, grafanaMessage, pdFollowUp, pdTrigger } from '../../../test/integrations-payloads.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';
import { DAY } from '../../lib/clock.js';
import { sweepRetention } from '../retention/index.js';

interface LogEntry {
  id: number;
  at: string;
  source: string;
  outcome: string;
  reason: string | null;
  incident_id: number | null;
  alerts: { ref: string; outcome: string; incident_id: number | null }[] | null;
  body: string | null;
  body_truncated: boolean;
}

describe('the integration event log', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  const live = () => ({ 'x-api-key': w.liveKey });
  before(async () => {
    t = await buildTestApp();
    w = await integrationsWorld(t);
  });
  after(() => t.close());

  const log = async (i: { id: number }) => {
    const res = await w.call(live(), 'GET', `/v1/integrations/${i.id}/events`);
    assert.equal(res.statusCode, 200, res.body);
    return { text: res.body, events: res.json<{ events: LogEntry[] }>().events };
  };
  /** A logged body, parsed. */
  const parsed = (e: LogEntry | undefined) => JSON.parse(e!.body!) as { dedup_key?: string; routing_key?: string; alerts: { annotations: { description: string } }[] };
  const post = async (url: string, payload: unknown, status: number, headers: Record<string, string> = {}) => {
    const res = await w.call(headers, 'POST', url, payload);
    assert.equal(res.statusCode, status, res.body);
    return res;
  };

  test('each payload with its outcome and incident: opened, repeated, acknowledged, resolved, ignored, rejected with the reason', async () => {
    const i = await w.integration();
    const url = w.path(i.events_url);
    await post(url, pdTrigger('', 'disk-1', 'critical'), 202);
    await post(url, pdTrigger('', 'disk-1', 'critical'), 202);
    await post(url, pdFollowUp('', 'disk-1', 'acknowledge'), 202);
    await post(url, pdFollowUp('', 'disk-1', 'resolve'), 202);
    await post(url, pdFollowUp('', 'never-opened', 'resolve'), 202);
    await post(url, pdTrigger('', 'bad-1', 'disaster'), 400);
    const [incident] = await w.tickets(live(), '?source_ref=disk-1');
    const { events } = await log(i);
    assert.deepEqual(
      events.map((e) => [e.source, e.outcome, e.incident_id]),
      [
        ['events_api', 'rejected', null],
        ['events_api', 'ignored', null],
        ['events_api', 'resolved', incident!.Id],
        ['events_api', 'acknowledged', incident!.Id],
        ['events_api', 'repeated', incident!.Id],
        ['events_api', 'opened', incident!.Id],
      ],
      'newest first',
    );
    assert.match(events[0]!.reason ?? '', /^'payload.severity' must be one of: critical, error, warning, info$/, 'a rejection says why, as the tool was told');
    assert.equal(events[1]!.reason, 'no open incident with this dedup_key');
    assert.equal(parsed(events.at(-1)).dedup_key, 'disk-1', 'the body as received');

    // A notification of several alerts: one entry, each alert's outcome in it.
    const am = w.path(i.alertmanager_url);
    await post(am, alertmanagerMessage([{ name: 'web-1', fingerprint: 'fp-web-1', status: 'firing' }]), 200);
    await post(am, alertmanagerMessage([{ name: 'web-1', fingerprint: 'fp-web-1', status: 'resolved' }, { name: 'web-2', fingerprint: 'fp-web-2', status: 'firing' }]), 200);
    await post(w.path(i.grafana_url), { ...grafanaMessage('firing'), alerts: [] }, 422);
    const [web1] = await w.tickets(live(), '?source_ref=fp-web-1');
    const [web2] = await w.tickets(live(), '?source_ref=fp-web-2');
    const latest = (await log(i)).events.slice(0, 3);
    assert.deepEqual(latest.map((e) => [e.source, e.outcome]), [['grafana', 'rejected'], ['alertmanager', 'opened'], ['alertmanager', 'opened']]);
    assert.equal(latest[0]!.reason, "'alerts' must NOT have fewer than 1 items");
    assert.equal(latest[1]!.incident_id, web2!.Id, 'the entry names the incident its main outcome touched');
    assert.deepEqual(latest[1]!.alerts, [
      { ref: 'fp-web-1', outcome: 'resolved', incident_id: web1!.Id },
      { ref: 'fp-web-2', outcome: 'opened', incident_id: web2!.Id },
    ]);
    assert.equal(latest[2]!.alerts, null, 'a single alert needs no list');
  });

  test('never the key (in the URL, as routing_key, as a Bearer token or anywhere in the body) nor the authorization header', async () => {
    const i = await w.integration();
    await post('/v2/enqueue', pdTrigger(i.key, 'keyed-1'), 202);
    const echoed = alertmanagerMessage([{ name: 'db-1', fingerprint: 'fp-db-1', status: 'firing' }]);
    echoed.alerts[0]!.annotations.description = `posted to ${i.alertmanager_url}`;
    await post('/v1/integrations/alertmanager', echoed, 200, { authorization: `Bearer ${i.key}` });
    await post(w.path(i.events_url), { ...pdTrigger(i.key, 'x'), event_action: 'explode' }, 400);
    const { text, events } = await log(i);
    assert.equal(events.length, 3);
    assert.ok(!text.includes(i.key), 'the key appears nowhere in the log');
    assert.ok(!/bearer/i.test(text), 'no authorization header');
    assert.equal(parsed(events[2]).routing_key, '[key]');
    assert.match(parsed(events[1]).alerts[0]!.annotations.description, /^posted to http:\/\/muster\.test\/v1\/integrations\/\[key\]\/alertmanager$/);
  });

  test('bodies are kept up to 64 KB; the last 100 per integration; 7 days (the retention sweep)', async () => {
    const i = await w.integration();
    const big = alertmanagerMessage([{ name: 'big', fingerprint: 'fp-big', status: 'firing' }]);
    big.alerts[0]!.annotations.description = 'é'.repeat(40_000); // 80 KB in UTF-8
    await post(w.path(i.alertmanager_url), big, 200);
    const [entry] = (await log(i)).events;
    assert.equal(entry!.body_truncated, true);
    assert.equal(Buffer.byteLength(entry!.body!, 'utf8') <= 64 * 1024, true);
    assert.ok(Buffer.byteLength(entry!.body!, 'utf8') > 64 * 1024 - 4, 'cut at 64 KB, not before');

    const url = w.path(i.events_url);
    for (let n = 0; n < 110; n++) await post(url, pdFollowUp('', `gone-${n}`, 'resolve'), 202);
    const { events } = await log(i);
    assert.equal(events.length, 100);
    assert.equal(parsed(events[0]).dedup_key, 'gone-109');
    assert.equal(parsed(events[99]).dedup_key, 'gone-10');
    const stored = await t.ctx.db.selectFrom('integration_events').select((eb) => eb.fn.countAll<number>().as('n')).where('integration_id', '=', i.id).executeTakeFirstOrThrow();
    assert.ok(Number(stored.n) <= 110, `trimmed as it grows (${stored.n} rows)`);

    t.clock.advance(6 * DAY);
    const other: CreatedIntegration = await w.integration();
    await post(w.path(other.events_url), pdFollowUp('', 'recent', 'resolve'), 202);
    t.clock.advance(DAY + 1);
    const swept = await sweepRetention(t.ctx);
    assert.ok(swept.integration_events >= 100, `old entries swept (${swept.integration_events})`);
    assert.equal((await log(i)).events.length, 0, 'older than 7 days: gone');
    assert.equal((await log(other)).events.length, 1, 'six days old: kept');
  });

  test('two integrations logging in turn are each trimmed to their last 100', async () => {
    // Trimmed on every tenth id of the table, two integrations taking turns would leave one of them untrimmed.
    const [a, b] = [await w.integration(), await w.integration()];
    for (let n = 0; n < 130; n++) for (const i of [a, b]) await post(w.path(i.events_url), pdFollowUp('', `turn-${n}`, 'resolve'), 202);
    for (const i of [a, b]) {
      const stored = await t.ctx.db.selectFrom('integration_events').select((eb) => eb.fn.countAll<number>().as('n')).where('integration_id', '=', i.id).executeTakeFirstOrThrow();
      assert.ok(Number(stored.n) >= 100 && Number(stored.n) <= 110, `integration ${i.id}: ${stored.n} rows`);
      const { events } = await log(i);
      assert.equal(parsed(events[0]).dedup_key, 'turn-129');
      assert.equal(parsed(events[99]).dedup_key, 'turn-30');
    }
  });

  // Two instances on PostgreSQL (one on SQLite, by design): each trims on its own count, their entries and trims interleaved.
  test('events of one integration on two instances at once: every one answered and logged, the log trimmed', async () => {
    const other = await secondInstance(t);
    const app2 = testDialect === 'postgres' ? await buildApp(other.ctx) : t.app;
    try {
      const i = await w.integration();
      const url = w.path(i.events_url);
      const answers = await Promise.all(
        Array.from({ length: 160 }, (_, n) => (n % 2 ? app2 : t.app).inject({ method: 'POST', url, payload: pdTrigger('', `both-${n}`, 'warning') })),
      );
      assert.deepEqual(answers.filter((r) => r.statusCode !== 202).map((r) => r.body), []);
      const stored = await t.ctx.db.selectFrom('integration_events').select((eb) => eb.fn.countAll<number>().as('n')).where('integration_id', '=', i.id).executeTakeFirstOrThrow();
      assert.ok(Number(stored.n) >= 100 && Number(stored.n) <= 120, `at most ten untrimmed entries per instance (${stored.n} rows)`);
      assert.equal((await log(i)).events.length, 100);
      const opened = await t.ctx.db.selectFrom('incidents').select((eb) => eb.fn.countAll<number>().as('n')).where('source_ref', 'like', 'both-%').executeTakeFirstOrThrow();
      assert.equal(Number(opened.n), 160, 'every trigger opened its incident');
    } finally {
      if (app2 !== t.app) await app2.close();
      await other.close();
    }
  });

  test('admins and owners of its org only', async () => {
    const i = await w.integration();
    assert.equal((await w.call({ cookie: w.member.cookie }, 'GET', `/v1/integrations/${i.id}/events`)).statusCode, 403);
    assert.equal((await w.call({ 'x-api-key': w.testKey }, 'GET', `/v1/integrations/${i.id}/events`)).statusCode, 404, 'not in test mode');
  });
});

describe("an Events API event's log entry commits with the change it reports", () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let commits = 0;
  const live = () => ({ 'x-api-key': w.liveKey });
  before(async () => {
    t = await buildTestApp({}, { onQuery: (text) => void (/^commit\b|;\s*commit$/i.test(text) && commits++) });
    w = await integrationsWorld(t);
  });
  after(() => t.close());

  const committed = async (url: string, payload: unknown) => {
    commits = 0;
    const res = await w.call({}, 'POST', url, payload);
    assert.equal(res.statusCode, 202, res.body);
    return commits;
  };

  test('one COMMIT per trigger, acknowledge and resolve: the incident and its entry together', async () => {
    const i = await w.integration();
    const url = w.path(i.events_url);
    assert.equal(await committed(url, pdTrigger('', 'one-1', 'critical')), 1, 'opened');
    assert.equal(await committed(url, pdTrigger('', 'one-1', 'critical')), 1, 'repeated');
    assert.equal(await committed(url, pdFollowUp('', 'one-1', 'acknowledge')), 1, 'acknowledged');
    assert.equal(await committed(url, pdFollowUp('', 'one-1', 'resolve')), 1, 'resolved');
    const events = (await w.call(live(), 'GET', `/v1/integrations/${i.id}/events`)).json<{ events: LogEntry[] }>().events;
    assert.deepEqual(
      events.map((e) => e.outcome),
      ['resolved', 'acknowledged', 'repeated', 'opened'],
    );
  });

  test('an entry that cannot be written undoes its incident (5xx, so the tool retries), and the retry opens it once', async () => {
    const i = await w.integration();
    const url = w.path(i.events_url);
    // The log refuses bodies that name 'refused-1' (a full disk, a lost connection: any failure of the entry's insert).
    if (testDialect === 'sqlite') {
      await sql`create trigger refuse_log before insert on integration_events when new.body like '%refused-1%' begin select raise(abort, 'log refused'); end`.execute(t.ctx.db);
    } else {
      await sql`create function refuse_log() returns trigger language plpgsql as $$ begin if new.body like '%refused-1%' then raise exception 'log refused'; end if; return new; end $$`.execute(t.ctx.db);
      await sql`create trigger refuse_log before insert on integration_events for each row execute function refuse_log()`.execute(t.ctx.db);
    }
    const refused = await w.call({}, 'POST', url, pdTrigger('', 'refused-1', 'critical'));
    assert.ok(refused.statusCode >= 500, `${refused.statusCode} ${refused.body}`);
    assert.deepEqual(await w.tickets(live(), '?source_ref=refused-1'), [], 'no incident without its entry');

    await sql`drop trigger refuse_log${sql.raw(testDialect === 'sqlite' ? '' : ' on integration_events')}`.execute(t.ctx.db);
    assert.equal(await committed(url, pdTrigger('', 'refused-1', 'critical')), 1);
    const opened = await w.tickets(live(), '?source_ref=refused-1');
    assert.equal(opened.length, 1, 'the retry opened it, once');
    const events = (await w.call(live(), 'GET', `/v1/integrations/${i.id}/events`)).json<{ events: LogEntry[] }>().events;
    assert.deepEqual(events.map((e) => [e.outcome, e.incident_id]), [['opened', opened[0]!.Id]]);
  });
});
