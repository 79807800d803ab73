// Payloads as the tools send them, for the tests. Each follows its tool's own documentation.

/**
 * PagerDuty Events API v2 trigger: the "Trigger" example of PagerDuty/developer-docs
 * docs/events-API-v2/02-Trigger-Events.md (routing_key set by the caller).
 */
export function pdTrigger(routingKey: string, dedupKey: string | undefined, severity = 'info') {
  return {
    payload: {
      summary: 'Example alert on host1.example.com',
      timestamp: '2015-07-17T08:42:58.315+0000',
      source: 'monitoringtool:cloudvendor:central-region-dc-01:852559987:cluster/api-stats-prod-003',
      severity,
      component: 'postgres',
      group: 'prod-datapipe',
      class: 'deploy',
      custom_details: { 'ping time': '1500ms', 'load avg': 0.75 },
    },
    routing_key: routingKey,
    ...(dedupKey === undefined ? {} : { dedup_key: dedupKey }),
    images: [{ src: 'https://www.pagerduty.com/wp-content/uploads/2016/05/pagerduty-logo-green.png', href: 'https://example.com/', alt: 'Example text' }],
    links: [{ href: 'https://example.com/', text: 'Link text' }],
    event_action: 'trigger',
    client: 'Sample Monitoring Service',
    client_url: 'https://monitoring.example.com',
  };
}

/** The "Acknowledge" and "Resolve" examples of the same page. */
export const pdFollowUp = (routingKey: string, dedupKey: string, action: 'acknowledge' | 'resolve') => ({ routing_key: routingKey, dedup_key: dedupKey, event_action: action });

/**
 * Alertmanager webhook, version 4: the shape documented at prometheus.io/docs/alerting/latest/
 * configuration/#webhook_config (notify/webhook `Message` embedding template.Data). Firing alerts
 * carry the zero time as endsAt, as Alertmanager sends them.
 */
export function alertmanagerMessage(alerts: { name: string; fingerprint: string; status: 'firing' | 'resolved'; severity?: string }[]) {
  const status = alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved';
  return {
    version: '4',
    groupKey: '{}:{alertname="InstanceDown"}',
    truncatedAlerts: 0,
    status,
    receiver: 'muster',
    groupLabels: { alertname: 'InstanceDown' },
    commonLabels: { alertname: 'InstanceDown', job: 'node' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager.example.com:9093',
    alerts: alerts.map((a) => ({
      status: a.status,
      labels: { alertname: 'InstanceDown', instance: `${a.name}:9100`, job: 'node', severity: a.severity ?? 'critical' },
      annotations: { summary: `Instance ${a.name}:9100 down`, description: `${a.name}:9100 of job node has been down for more than 5 minutes.` },
      startsAt: '2026-11-23T10:00:00.000Z',
      endsAt: a.status === 'firing' ? '0001-01-01T00:00:00Z' : '2026-11-23T10:30:00.000Z',
      generatorURL: 'http://prometheus.example.com:9090/graph?g0.expr=up+%3D%3D+0&g0.tab=1',
      fingerprint: a.fingerprint,
    })),
  };
}

/**
 * Grafana's webhook contact point: the example body of grafana.com/docs/grafana/latest/alerting/
 * configure-notifications/manage-contact-points/integrations/webhook-notifier/ (status per alert).
 */
export function grafanaMessage(status: 'firing' | 'resolved') {
  return {
    receiver: 'My Super Webhook',
    status,
    orgId: 1,
    alerts: [
      {
        status,
        labels: { alertname: 'High memory usage', team: 'blue', zone: 'us-1' },
        annotations: { description: 'The system has high memory usage', runbook_url: 'https://myrunbook.com/runbook/1234', summary: 'This alert was triggered for zone us-1' },
        startsAt: '2021-10-12T09:51:03.157076+02:00',
        endsAt: status === 'firing' ? '0001-01-01T00:00:00Z' : '2021-10-12T10:01:03.157076+02:00',
        generatorURL: 'https://play.grafana.org/alerting/1afz29v7z/edit',
        fingerprint: 'c6eadffa33fcdf37',
        silenceURL: 'https://play.grafana.org/alerting/silence/new?alertmanager=grafana&matchers=alertname%3DT2%2Cteam%3Dblue%2Czone%3Dus-1',
        dashboardURL: '',
        panelURL: '',
        values: { B: 44.23943737541908, C: 1 },
      },
    ],
    groupLabels: {},
    commonLabels: { team: 'blue' },
    commonAnnotations: {},
    externalURL: 'https://play.grafana.org/',
    version: '1',
    groupKey: '{}:{}',
    truncatedAlerts: 0,
    title: `[${status === 'firing' ? 'FIRING' : 'RESOLVED'}:1] (blue)`,
    state: status === 'firing' ? 'alerting' : 'ok',
    message: '**Firing**\n\nLabels:\n - alertname = High memory usage\n - team = blue\n - zone = us-1\n',
  };
}
