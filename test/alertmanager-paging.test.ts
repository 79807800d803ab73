// The path of a real alert (issue #36): Debian's prometheus-alertmanager, started here, sends its
// webhook to an integration whose escalation policy pages a schedule; the person on call is paged
// at once, by their rules, and Alertmanager's resolved notification ends the page. `npm test`
// installs the package when it is missing (scripts/test.mjs), as it does Radicale.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { ALERTMANAGER_BINARY, eventually } from './alertmanager.js';
import { freePort } from './ports.js';
import { dispatchWorld, type DispatchWorld, type TimelineView } from './world.js';

const BINARY = ALERTMANAGER_BINARY;

/**
 * Polls `probe` until it answers something, or fails after `ms` with what Alertmanager logged
 * (`log()` is read when it fails). Alertmanager works on its own wall clock, so this waits on it
 * with a generous deadline; the app's ManualClock is never moved here (see the note in `before`).
 */
interface Walked {
  Id: number;
  status: string;
  assignee_id: number | null;
  escalation: { policy_name: string; level: number } | null;
}

describe("a real Alertmanager's alert pages whoever is on call, and its resolution stops the page", () => {
  let w: DispatchWorld;
  let am: ChildProcess;
  let amUrl: string;
  let dir: string;
  let integrationId: number;
  let amLog = '';

  before(async () => {
    assert.ok(fs.existsSync(BINARY), `${BINARY} is missing: apt-get install prometheus-alertmanager (npm test installs it as root)`);
    w = await dispatchWorld();
    await w.t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (w.t.app.server.address() as AddressInfo).port;
    // The app's clock stands at 2026-01-05T12:00Z (a ManualClock, never moved here): Ann's day-long
    // turn began at 09:00. Alertmanager stamps the alert with its own wall clock; the app keeps
    // startsAt as data only and decides everything (who is on call, when a rule falls due) by its
    // clock, so the SMS rule below stays pending until the resolution cancels it.
    const layer = { start: '2026-01-05T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] };
    const schedule = await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: 'Primary', time_zone: 'UTC', layers: [layer] });
    const policy = await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/escalation-policies`, { name: 'Pumps', levels: [{ delay_minutes: 10, targets: [{ type: 'schedule', id: schedule.id }] }] });
    const integration = await w.ok<{ id: number; alertmanager_url: string }>(w.as(w.owner), 'POST', '/v1/integrations', { name: 'Prometheus', org_id: w.orgId, escalation_policy_id: policy.id });
    integrationId = integration.id;
    // Email at once (sent by the run the commit wakes), an SMS in 5 minutes (still pending when resolved).
    await w.ok(w.as(w.ann), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'email', delay_minutes: 0 }, { channel: 'sms', delay_minutes: 5 }], low: [] }, 200);

    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-alertmanager-'));
    const webhook = `http://127.0.0.1:${port}${new URL(integration.alertmanager_url).pathname}`;
    fs.writeFileSync(
      path.join(dir, 'alertmanager.yml'),
      [
        // resolve_timeout is left at its 5m: the test resolves the alert itself with an endsAt in
        // the past, and a shorter one could resolve it before the firing assertions ran.
        'route:',
        '  receiver: muster',
        '  group_by: [alertname]',
        '  group_wait: 0s',
        '  group_interval: 1s',
        '  repeat_interval: 1h',
        'receivers:',
        '  - name: muster',
        '    webhook_configs:',
        `      - url: ${webhook}`,
        '        send_resolved: true',
        '',
      ].join('\n'),
    );
    const amPort = await freePort();
    amUrl = `http://127.0.0.1:${amPort}`;
    am = spawn(BINARY, [`--config.file=${path.join(dir, 'alertmanager.yml')}`, `--storage.path=${dir}`, `--web.listen-address=127.0.0.1:${amPort}`, '--cluster.listen-address='], { stdio: ['ignore', 'pipe', 'pipe'] });
    am.stdout?.on('data', (d: Buffer) => (amLog += d.toString()));
    am.stderr?.on('data', (d: Buffer) => (amLog += d.toString()));
    const child = am;
    // Ready when it answers; it exits at once on a bad flag or config, which fails here with its log.
    await eventually(
      'Alertmanager to be ready',
      async () => {
        if (child.exitCode !== null) assert.fail(`Alertmanager exited (${child.exitCode}):\n${amLog}`);
        return (await fetch(`${amUrl}/-/ready`).catch(() => undefined))?.ok ? true : undefined;
      },
      () => amLog,
    );
  });
  after(async () => {
    // Alertmanager writes its notification log and silences into the storage dir as it stops:
    // wait for it to exit before removing the dir.
    if (am && am.exitCode === null && am.signalCode === null) {
      const exited = new Promise((r) => am.once('exit', r));
      am.kill('SIGTERM');
      await exited;
    }
    await w?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const alert = (endsAt?: Date) => [
    {
      labels: { alertname: 'PumpDown', severity: 'critical', instance: 'pump-3' },
      annotations: { summary: 'Pump 3 stopped at Mill Road' },
      startsAt: new Date(Date.now() - 60_000).toISOString(),
      ...(endsAt ? { endsAt: endsAt.toISOString() } : {}),
    },
  ];
  const post = async (body: unknown) => {
    const res = await fetch(`${amUrl}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 200, await res.text());
  };
  const events = async (id: number, type: string): Promise<TimelineView[]> => (await w.timeline(w.as(w.owner), id)).filter((e) => e.type === type);

  test('firing: one incident following the policy; Ann, on call, is paged, emailed and assigned; resolved: it resolves and her SMS never goes', async () => {
    await post(alert());
    const incidentId = await eventually(
      'the incident',
      async () => {
        const row = await w.t.ctx.db.selectFrom('incidents').select('id').where('integration_id', '=', integrationId).executeTakeFirst();
        return row?.id;
      },
      () => amLog,
    );
    await eventually('the page', async () => ((await events(incidentId, 'notified')).length > 0 ? true : undefined), () => amLog);
    const incident = await w.ok<Walked>(w.as(w.owner), 'GET', `/v1/tickets/${incidentId}`);
    assert.equal(incident.escalation?.policy_name, 'Pumps');
    assert.equal(incident.escalation?.level, 1);
    assert.equal(incident.assignee_id, w.ann.id, 'the first person paged');
    const paged = await events(incidentId, 'paged');
    assert.deepEqual(paged.map((e) => [e.data.user_id, e.data.level, (e.data.target as { type: string }).type]), [[w.ann.id, 1, 'schedule']]);
    assert.deepEqual((await events(incidentId, 'notified')).map((e) => [e.data.channel, e.data.outcome]), [['email', 'sent']]);

    await post(alert(new Date(Date.now() - 1_000)));
    await eventually('the resolution', async () => ((await w.ok<Walked>(w.as(w.owner), 'GET', `/v1/tickets/${incidentId}`)).status === 'resolved' ? true : undefined), () => amLog);
    const sms = await w.t.ctx.db.selectFrom('paging_notifications').select(['status', 'reason']).where('incident_id', '=', incidentId).where('channel', '=', 'sms').execute();
    assert.deepEqual(sms, [{ status: 'cancelled', reason: 'resolved' }]);
    const count = await w.t.ctx.db.selectFrom('incidents').select((eb) => eb.fn.countAll<number>().as('n')).where('integration_id', '=', integrationId).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1, 'one incident for the alert, however many notifications Alertmanager sent');
  });
});
