import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../lib/schemas.js';
import type { Severity } from './integrations.service.js';
import { priorityMapOf } from './integrations.service.js';
import type { IntegrationRow } from './integrations.repository.js';
import type { Trigger } from './lifecycle.js';

// Alertmanager's webhook body, version 4 (prometheus/alertmanager notify/webhook `Message`, which
// embeds template.Data), and Grafana's webhook contact point, which sends the same shape plus
// `title`, `state`, `message`, `orgId` and per alert `silenceURL`, `dashboardURL`, `panelURL`,
// `values` (grafana.com docs, "Configure the webhook notifier for Alerting"). Fields a tool adds in
// later versions are accepted and ignored.
// Label sets are small (Prometheus' own series rarely pass 30 labels): 500 keeps any real alert and
// bounds what one invalid alert can cost (issue #31, F2).
const Labels = Type.Record(Type.String(), Type.String(), { maxProperties: 500 });
const Url = Type.Optional(Type.String({ maxLength: 4096 }));

export const AlertItem = Type.Object({
  status: StringEnum(['firing', 'resolved']),
  labels: Labels,
  annotations: Type.Optional(Labels),
  startsAt: Type.Optional(Type.String({ maxLength: 64 })),
  endsAt: Type.Optional(Type.String({ maxLength: 64 })),
  generatorURL: Url,
  fingerprint: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'the dedup key; else a hash of the labels' })),
  silenceURL: Url,
  dashboardURL: Url,
  panelURL: Url,
  values: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Number(), { maxProperties: 500 }), Type.Null()])),
});
export type AlertItem = Static<typeof AlertItem>;

export const AlertNotification = Type.Object({
  version: Type.Optional(Type.String({ maxLength: 16 })),
  groupKey: Type.Optional(Type.String({ maxLength: 4096 })),
  truncatedAlerts: Type.Optional(Type.Integer({ minimum: 0 })),
  status: StringEnum(['firing', 'resolved']),
  receiver: Type.Optional(Type.String({ maxLength: 1024 })),
  groupLabels: Type.Optional(Labels),
  commonLabels: Type.Optional(Labels),
  commonAnnotations: Type.Optional(Labels),
  externalURL: Url,
  alerts: Type.Array(AlertItem, { minItems: 1, maxItems: 1000 }),
  // Grafana only.
  orgId: Type.Optional(Type.Integer()),
  title: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 64 })),
  message: Type.Optional(Type.String({ maxLength: 100_000 })),
});
export type AlertNotification = Static<typeof AlertNotification>;

export const AlertOutcome = Type.Object({
  fingerprint: Type.String(),
  action: StringEnum(['created', 'repeated', 'resolved', 'ignored', 'suppressed'], { description: 'suppressed: a maintenance window covers the integration (nothing opened or repeated)' }),
  incident_id: Type.Union([Type.Integer(), Type.Null()]),
});
export const AlertsAccepted = Type.Object({ status: Type.String(), alerts: Type.Array(AlertOutcome) });

/** Alertmanager's fingerprint is a hash of the label set; without one, the same idea. */
export function fingerprintOf(a: AlertItem): string {
  if (a.fingerprint) return a.fingerprint;
  const sorted = Object.keys(a.labels).sort().map((k) => [k, a.labels[k]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

const SEVERITY_ALIASES: Record<string, Severity> = { critical: 'critical', page: 'critical', high: 'error', error: 'error', major: 'error', warning: 'warning', warn: 'warning', minor: 'warning', info: 'info', low: 'info', none: 'info' };

function describe(a: AlertItem, n: AlertNotification): string {
  const lines: string[] = [];
  if (a.annotations?.description) lines.push(a.annotations.description, '');
  lines.push('Labels:', ...Object.entries(a.labels).map(([k, v]) => ` - ${k} = ${v}`));
  const notes = Object.entries(a.annotations ?? {}).filter(([k]) => k !== 'summary' && k !== 'description');
  if (notes.length) lines.push('Annotations:', ...notes.map(([k, v]) => ` - ${k} = ${v}`));
  if (a.values) lines.push('Values:', ...Object.entries(a.values).map(([k, v]) => ` - ${k} = ${v}`));
  for (const [k, v] of [['Source', a.generatorURL], ['Dashboard', a.dashboardURL], ['Panel', a.panelURL], ['Silence', a.silenceURL], ['Sent by', n.externalURL]] as const) {
    if (v) lines.push(`${k}: ${v}`);
  }
  return lines.join('\n').slice(0, 20_000);
}

export function alertTrigger(integration: IntegrationRow, a: AlertItem, n: AlertNotification, tool: 'alertmanager' | 'grafana'): Trigger {
  const severity = SEVERITY_ALIASES[(a.labels.severity ?? '').toLowerCase()] ?? 'warning';
  const title = a.annotations?.summary || a.labels.alertname || n.title || 'Alert';
  return {
    ref: fingerprintOf(a),
    title,
    description: describe(a, n),
    priority: priorityMapOf(integration)[severity],
    source: 'alert',
    tool,
    data: { alertname: a.labels.alertname ?? null, starts_at: a.startsAt ?? null, receiver: n.receiver ?? null },
  };
}
