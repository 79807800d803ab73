import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../lib/schemas.js';
import { PrioritySchema } from '../incidents/index.js';

const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

/** Severity (Events API, Alertmanager `severity` label) -> incident priority. */
export const PriorityMap = Type.Object(
  {
    critical: Type.Optional(PrioritySchema),
    error: Type.Optional(PrioritySchema),
    warning: Type.Optional(PrioritySchema),
    info: Type.Optional(PrioritySchema),
  },
  { additionalProperties: false, description: 'default: critical urgent, error high, warning normal, info low' },
);
export type PriorityMap = Static<typeof PriorityMap>;

const Domain = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$' });
const Settings = {
  default_assignee_id: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'a member of the org; new incidents go to them' }))),
  priority_map: Type.Optional(Nullable(PriorityMap)),
  allowed_senders: Type.Optional(Nullable(Type.Array(Domain, { maxItems: 50, description: 'sender domains that may open incidents by email; null: anyone' }))),
  escalation_policy_id: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "an escalation policy of the org: who is paged for its incidents; null: the org's default" }))),
};

const IntervalSeconds = Type.Integer({ minimum: 30, maximum: 86_400, description: 'a heartbeat: the most seconds between two pings (30..86400)' });
const GraceSeconds = Type.Integer({ minimum: 0, maximum: 86_400, description: 'a heartbeat: seconds of lateness tolerated before it is down (default 0)' });

export const CreateIntegrationBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  type: Type.Optional(StringEnum(['alerts', 'heartbeat'], { description: 'alerts (default): tools post alerts; heartbeat: a monitor pings it, and silence opens an incident' })),
  interval_seconds: Type.Optional(IntervalSeconds),
  grace_seconds: Type.Optional(GraceSeconds),
  org_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "default: the caller's one shared (non-personal) org, else the primary org; required (422) when the caller belongs to several shared orgs" })),
  ...Settings,
});
export type CreateIntegrationBody = Static<typeof CreateIntegrationBody>;

export const UpdateIntegrationBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })), interval_seconds: Type.Optional(IntervalSeconds), grace_seconds: Type.Optional(GraceSeconds), ...Settings },
  { minProperties: 1 },
);
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBody>;

export const Heartbeat = Type.Object(
  {
    interval_seconds: Type.Integer(),
    grace_seconds: Type.Integer(),
    status: StringEnum(['new', 'up', 'late', 'down'], { description: 'new: never pinged; late: past its interval, within its grace; down: missed, its incident open until the next ping' }),
    last_ping_at: Nullable(Type.String()),
    due_at: Nullable(Type.String({ description: 'when it goes down unless pinged first' })),
    incident_id: Nullable(Type.Integer({ description: 'the incident of its miss, while down' })),
  },
  { title: 'Heartbeat' },
);

export const Integration = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  org_id: Type.Integer(),
  livemode: Type.Boolean(),
  redacted_key: Type.String({ description: 'the last four characters of the key' }),
  email_address: Nullable(Type.String({ description: 'set when inbound email is enabled (INBOUND_EMAIL_DOMAIN)' })),
  default_assignee_id: Nullable(Type.Integer()),
  priority_map: Type.Object({ critical: PrioritySchema, error: PrioritySchema, warning: PrioritySchema, info: PrioritySchema }),
  allowed_senders: Nullable(Type.Array(Type.String())),
  escalation_policy_id: Nullable(Type.Integer({ description: "null: the org's default policy (dispatch settings)" })),
  type: StringEnum(['alerts', 'heartbeat']),
  heartbeat: Nullable(Heartbeat),
  created_at: Type.String(),
}, { title: 'Integration', description: 'An incident source: a monitoring tool posting alerts' });
export type Integration = Static<typeof Integration>;

export const CreatedIntegration = Type.Object({
  ...Integration.properties,
  key: Type.String({ description: 'The secret. Shown once: only its hash is stored.' }),
  events_url: Type.String({ description: 'PagerDuty Events API v2 drop-in' }),
  alertmanager_url: Type.String(),
  grafana_url: Type.String(),
  heartbeat_url: Type.Optional(Type.String({ description: 'a heartbeat: GET, HEAD or POST it to ping' })),
}, { title: 'CreatedIntegration', description: 'A new integration: its key is shown this once' });

export const IntegrationList = Type.Object({ integrations: Type.Array(Integration) }, { title: 'IntegrationList' });
export const ListIntegrationsQuery = Type.Object({ org_id: Type.Optional(Id) });
export const RevokedIntegration = Type.Object({ id: Type.Integer(), revoked: Type.Boolean() });

export const IntegrationEvent = Type.Object(
  {
    id: Type.Integer(),
    at: Type.String(),
    source: StringEnum(['events_api', 'alertmanager', 'grafana', 'heartbeat']),
    outcome: StringEnum(['opened', 'repeated', 'resolved', 'acknowledged', 'suppressed', 'rejected', 'ignored'], {
      description: 'ignored: a resolve or acknowledge with nothing open; for a notification of several alerts, the one that did most (each is in `alerts`)',
    }),
    reason: Nullable(Type.String({ description: 'why it was rejected or suppressed' })),
    incident_id: Nullable(Type.Integer()),
    alerts: Nullable(Type.Array(Type.Object({ ref: Type.String(), outcome: Type.String(), incident_id: Nullable(Type.Integer()) }))),
    body: Nullable(Type.String({ description: 'the body as received (JSON), without the key; at most 64 KB; null for a heartbeat miss' })),
    body_truncated: Type.Boolean(),
  },
  { title: 'IntegrationEvent' },
);
export const IntegrationEventList = Type.Object({ events: Type.Array(IntegrationEvent, { description: 'newest first, at most 100, at most 7 days old' }) }, { title: 'IntegrationEventList' });
