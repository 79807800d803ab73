// Alertmanager's Watchdog pattern against a real Alertmanager (issue #37): Debian's
// prometheus-alertmanager, started here, routes an always-firing Watchdog alert to a heartbeat
// integration's Alertmanager URL. Its notifications keep the heartbeat up; when Alertmanager stops,
// the heartbeat goes down (one incident, paged by the integration's policy); when it is back and
// sends the Watchdog again, the incident resolves. Alertmanager runs on its own wall clock, so the
// test waits on what it sends (polling, with a deadline); the app's checker runs on its ManualClock,
// moved only while Alertmanager is stopped.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { checkHeartbeats, HEARTBEAT_TICK_MS } from '../src/modules/integrations/index.js';
import { ALERTMANAGER_BINARY, eventually } from './alertmanager.js';
import { freePort } from './ports.js';
import { dispatchWorld, type DispatchWorld } from './world.js';

const BINARY = ALERTMANAGER_BINARY;

interface Beat {
  id: number;
  heartbeat: { status: string; last_ping_at: string | null; incident_id: number | null };
}

describe("a real Alertmanager's Watchdog keeps a heartbeat up; when Alertmanager stops, the heartbeat pages", () => {
  let w: DispatchWorld;
  let dir: string;
  let amLog = '';
  let am: ChildProcess | undefined;
  let amPort: number;
  let heartbeatId: number;

  const start = async () => {
    am = spawn(BINARY, [`--config.file=${path.join(dir, 'alertmanager.yml')}`, `--storage.path=${dir}`, `--web.listen-address=127.0.0.1:${amPort}`, '--cluster.listen-address='], { stdio: ['ignore', 'pipe', 'pipe'] });
    am.stdout?.on('data', (d: Buffer) => (amLog += d.toString()));
    am.stderr?.on('data', (d: Buffer) => (amLog += d.toString()));
    const child = am;
    await eventually(
      'Alertmanager to be ready',
      async () => {
        if (child.exitCode !== null) assert.fail(`Alertmanager exited (${child.exitCode}):\n${amLog}`);
        return (await fetch(`http://127.0.0.1:${amPort}/-/ready`).catch(() => undefined))?.ok ? true : undefined;
      },
      () => amLog,
    );
    // The Watchdog: always firing (Prometheus' `vector(1)` rule), here posted straight to Alertmanager.
    const watchdog = [{ labels: { alertname: 'Watchdog', severity: 'none' }, annotations: { summary: 'The alerting pipeline is alive' }, startsAt: new Date().toISOString() }];
    const res = await fetch(`http://127.0.0.1:${amPort}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(watchdog) });
    assert.equal(res.status, 200, await res.text());
  };
  const stop = async () => {
    const child = am;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  const beat = async () => (await w.ok<{ integrations: Beat[] }>(w.as(w.owner), 'GET', `/v1/integrations?org_id=${w.orgId}`)).integrations.find((i) => i.id === heartbeatId)!.heartbeat;

  before(async () => {
    assert.ok(fs.existsSync(BINARY), `${BINARY} is missing: apt-get install prometheus-alertmanager (npm test installs it as root)`);
    w = await dispatchWorld();
    await w.t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (w.t.app.server.address() as AddressInfo).port;
    const policy = await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/escalation-policies`, { name: 'Monitoring', levels: [{ delay_minutes: 10, targets: [{ type: 'user', id: w.ann.id }] }] });
    const integration = await w.ok<{ id: number; alertmanager_url: string }>(w.as(w.owner), 'POST', '/v1/integrations', {
      name: 'Alertmanager watchdog',
      org_id: w.orgId,
      type: 'heartbeat',
      interval_seconds: 60,
      escalation_policy_id: policy.id,
    });
    heartbeatId = integration.id;
    await w.ok(w.as(w.ann), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'email', delay_minutes: 0 }], low: [] }, 200);
    await checkHeartbeats(w.t.ctx); // the checker's first run in this instance

    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-alertmanager-hb-'));
    const webhook = `http://127.0.0.1:${port}${new URL(integration.alertmanager_url).pathname}`;
    // The Watchdog's own route, as the kube-prometheus stack configures it: re-sent often, never resolved.
    fs.writeFileSync(
      path.join(dir, 'alertmanager.yml'),
      [
        'route:',
        '  receiver: blackhole',
        '  routes:',
        '    - matchers: [alertname="Watchdog"]',
        '      receiver: muster-heartbeat',
        '      group_wait: 0s',
        '      group_interval: 1s',
        '      repeat_interval: 2s',
        'receivers:',
        '  - name: blackhole',
        '  - name: muster-heartbeat',
        '    webhook_configs:',
        `      - url: ${webhook}`,
        '        send_resolved: false',
        '',
      ].join('\n'),
    );
    amPort = await freePort();
  });
  after(async () => {
    await stop();
    await w?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('up while the Watchdog arrives; down (one incident, Ann paged) once Alertmanager is gone; resolved when it is back', async () => {
    assert.equal((await beat()).status, 'new');
    await start();
    await eventually('the first Watchdog notification', async () => ((await beat()).last_ping_at !== null ? true : undefined), () => amLog);
    assert.equal((await beat()).status, 'up');
    assert.equal(await w.t.ctx.db.selectFrom('incidents').select('id').where('integration_id', '=', heartbeatId).executeTakeFirst(), undefined, 'the Watchdog itself opens nothing');

    // Alertmanager goes away: nothing arrives any more.
    await stop();
    let opened = 0;
    for (let n = 0; n < 60_000 / HEARTBEAT_TICK_MS + 1; n++) {
      w.t.clock.advance(HEARTBEAT_TICK_MS);
      opened += await checkHeartbeats(w.t.ctx);
    }
    await w.t.ctx.escalation.idle();
    assert.equal(opened, 1);
    const down = await beat();
    assert.equal(down.status, 'down');
    const incident = await w.ok<{ Id: number; title: string; priority: string; assignee_id: number | null }>(w.as(w.owner), 'GET', `/v1/tickets/${down.incident_id}`);
    assert.equal(incident.title, 'Heartbeat missed: Alertmanager watchdog');
    assert.equal(incident.priority, 'urgent');
    assert.equal(incident.assignee_id, w.ann.id, 'Ann paged by the policy (the first person paged becomes the assignee)');
    const paged = (await w.timeline(w.as(w.owner), incident.Id)).filter((e) => e.type === 'paged');
    assert.deepEqual(paged.map((e) => e.data.user_id), [w.ann.id]);

    // Alertmanager is back and sends the Watchdog: the heartbeat is up and the incident resolved.
    await start();
    await eventually('the incident to resolve', async () => ((await w.ok<{ status: string }>(w.as(w.owner), 'GET', `/v1/tickets/${incident.Id}`)).status === 'resolved' ? true : undefined), () => amLog);
    assert.equal((await beat()).status, 'up');
  });
});
