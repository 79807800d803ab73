import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PagingQuery, StringEnum } from '../../lib/schemas.js';

export const StatusSchema = StringEnum(['open', 'in_progress', 'resolved', 'closed']);
export const PrioritySchema = StringEnum(['low', 'normal', 'high', 'urgent'], { description: 'SLA: urgent 1 h, high 4 h, normal 24 h, low 48 h' });
export const SourceSchema = StringEnum(['api', 'email', 'webhook', 'alert', 'dashboard'], { description: '`dashboard`: made in the web dashboard' });

export const Lat = Type.Number({ minimum: -90, maximum: 90 });
export const Lng = Type.Number({ minimum: -180, maximum: 180 });

const ArrivalRadius = Type.Integer({ minimum: 10, maximum: 50_000, description: 'metres: the assignee is on scene when their live position comes this near (default 150; docs/dispatch.md, arrival)' });

export const CreateIncidentBody = Type.Object({
  title: Type.String({ maxLength: 200, pattern: '\\S' }),
  description: Type.Optional(Type.String({ maxLength: 20_000 })),
  priority: Type.Optional(PrioritySchema),
  source: Type.Optional(SourceSchema),
  source_ref: Type.Optional(Type.String({ maxLength: 200 })),
  lat: Type.Optional(Lat),
  lng: Type.Optional(Lng),
  location_name: Type.Optional(Type.String({ maxLength: 200 })),
  arrival_radius_m: Type.Optional(ArrivalRadius),
  org_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "default: the caller's primary org" })),
  escalation_policy_id: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "an escalation policy of the incident's org; the incident keeps a copy of it as it is now (later edits of the policy do not change it)" }))),
});
export type CreateIncidentBody = Static<typeof CreateIncidentBody>;

export const UpdateIncidentBody = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    priority: Type.Optional(PrioritySchema),
    description: Type.Optional(Nullable(Type.String({ maxLength: 20_000 }))),
    assignee_id: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'a member of the org; null unassigns' }))),
    arrival_radius_m: Type.Optional(ArrivalRadius),
    escalation_policy_id: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "an escalation policy of the incident's org; the incident keeps a copy of it as it is now (later edits of the policy do not change it)" }))),
  },
  { minProperties: 1 },
);
export type UpdateIncidentBody = Static<typeof UpdateIncidentBody>;

export const Incident = Type.Object({
  Id: Type.Integer(),
  org_id: Type.Integer(),
  livemode: Type.Boolean(),
  title: Type.String(),
  description: Nullable(Type.String()),
  status: StatusSchema,
  priority: PrioritySchema,
  source: SourceSchema,
  source_ref: Nullable(Type.String()),
  sla_due_at: Type.String(),
  sla_breached: Type.Boolean(),
  sla_status: StringEnum(['ok', 'warning', 'breached', 'met']),
  customer_token: Type.String(),
  customer_status_url: Type.String(),
  lat: Nullable(Type.Number()),
  lng: Nullable(Type.Number()),
  location_name: Nullable(Type.String()),
  arrival_radius_m: Type.Integer({ description: 'metres: within this of the incident its assignee is on scene (docs/dispatch.md, arrival)' }),
  assignee_id: Nullable(Type.Integer()),
  created_at: Type.String(),
  updated_at: Type.String(),
  resolved_at: Nullable(Type.String()),
  acknowledged_at: Nullable(Type.String({ description: "set by the assignee's (or an admin's) acknowledgement; cleared by reassignment" })),
  acknowledged_by: Nullable(Type.Integer()),
  integration: Type.Union(
    [
      Type.Object(
        {
          id: Type.Integer(),
          name: Type.String({ description: "the integration's name when the incident opened" }),
          tool: Nullable(StringEnum(['events_api', 'alertmanager', 'grafana', 'email', 'heartbeat'], { description: 'what posted it; null for incidents opened before this was recorded' })),
        },
        { title: 'IncidentIntegration' },
      ),
      Type.Null(),
    ],
    { description: 'the integration (monitoring tool or mailbox) that opened it; null for every other incident' },
  ),
  escalation: Type.Union(
    [
      Type.Object(
        {
          policy_id: Type.Integer(),
          policy_name: Type.String({ description: "the policy's name when the incident took its copy" }),
          level: Type.Integer({ description: 'the level fired last (1-based); 0 before the first fired' }),
          levels: Type.Integer({ description: 'how many levels the policy has' }),
          loop: Type.Integer({ description: 'how many times the policy ran again after its last level (0 on the first round)' }),
          repeat: Type.Integer({ description: 'how many times it runs again at most' }),
          next_at: Nullable(Type.String({ description: 'when the next level fires (or, after the last, when the escalation is exhausted); null when nothing more will fire: acknowledged, resolved, exhausted, or a normal or low incident (one level only)' })),
        },
        { title: 'IncidentEscalation' },
      ),
      Type.Null(),
    ],
    { description: 'where the escalation policy the incident follows stands (docs/paging.md); null when it follows none' },
  ),
}, {
    title: 'Incident',
    description: 'An incident (also called a ticket)',
    examples: [
      {
        Id: 42, org_id: 7, livemode: true, title: 'Gas leak on Main St', description: null, status: 'open', priority: 'urgent', source: 'api', source_ref: null,
        sla_due_at: '2026-03-02T10:15:00.000Z', sla_breached: false, sla_status: 'ok', customer_token: 'cst_4f9a1c', customer_status_url: 'https://muster.example.org/incidents/status/cst_4f9a1c',
        lat: 48.8566, lng: 2.3522, location_name: 'Main St 12', assignee_id: null, created_at: '2026-03-02T09:15:00.000Z', updated_at: '2026-03-02T09:15:00.000Z',
        resolved_at: null, acknowledged_at: null, acknowledged_by: null, integration: null, escalation: null,
      },
    ],
  });
export type Incident = Static<typeof Incident>;

export const ListIncidentsQuery = Type.Object({
  ...PagingQuery.properties,
  status: Type.Optional(StatusSchema),
  priority: Type.Optional(PrioritySchema),
  org_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  assignee_id: Type.Optional(Type.String({ pattern: '^(me|none|[1-9][0-9]{0,9})$', description: '`me`, `none` (unassigned) or a user id' })),
  source_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'only incidents of this dedup key' })),
  // The dispatcher's console (issue 20; list-filters.ts).
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'search: case-insensitive substring of the title, description or reference; `#12` also matches the id' })),
  source: Type.Optional(
    StringEnum(['api', 'email', 'webhook', 'alert', 'dashboard', 'integration'], {
      description: '`integration`: opened by any integration (a monitoring tool or a mailbox); `alert`: field alerts only (not integrations)',
    }),
  ),
  sort: Type.Optional(StringEnum(['newest', 'priority', 'sla_due'], { description: 'default newest (id descending); priority: urgent first; sla_due: soonest SLA due first' })),
  with_counts: Type.Optional(Type.Boolean({ description: 'also answer `counts`: incidents per status under the other filters' })),
});
export type ListIncidentsQuery = Static<typeof ListIncidentsQuery>;

export const IncidentList = Type.Object({
  tickets: Type.Array(Incident),
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
  counts: Type.Optional(
    Type.Object(
      { open: Type.Integer(), in_progress: Type.Integer(), resolved: Type.Integer(), closed: Type.Integer() },
      { description: 'with `with_counts=true`: per status, under every filter but `status`' },
    ),
  ),
}, { title: 'IncidentList' });
export type IncidentList = Static<typeof IncidentList>;

export const IncidentParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
export const DeletedIncident = Type.Object({ Id: Type.Integer(), deleted: Type.Boolean() }, { title: 'DeletedIncident' });

export const CreateReplyBody = Type.Object({
  body: Type.String({ maxLength: 20_000, pattern: '\\S' }),
  public: Type.Optional(Type.Boolean({ description: 'shown on the status page; default false (internal)' })),
});
export const Reply = Type.Object({
  id: Type.Integer(),
  incident_id: Type.Integer(),
  body: Type.String(),
  public: Type.Boolean(),
  author_id: Nullable(Type.Integer()),
  author_name: Nullable(Type.String()),
  created_at: Type.String(),
}, { title: 'Reply', description: 'A reply on an incident; public ones show on the status page' });
export type Reply = Static<typeof Reply>;
export const ReplyList = Type.Object({ replies: Type.Array(Reply) }, { title: 'ReplyList' });

export const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) });
export const StatusPage = Type.Object({
  org_name: Type.String({ description: 'the name of the organization handling it (nothing else of the org is shown)' }),
  title: Type.String(),
  status: StatusSchema,
  created_at: Type.String(),
  updated_at: Type.String(),
  replies: Type.Array(Type.Object({ body: Type.String(), author_name: Nullable(Type.String()), created_at: Type.String() })),
  status_changes: Type.Array(Type.Object({ from: StatusSchema, to: StatusSchema, at: Type.String() }), { description: 'oldest first; from the timeline' }),
}, { title: 'StatusPage', description: 'The public status of an incident' });
export type StatusPage = Static<typeof StatusPage>;
