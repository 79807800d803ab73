// The API shapes the dashboard reads (see docs/api.md and /v1/openapi.json).
// The API's shapes are the types generated from its OpenAPI description (clients/typescript,
// `npm run client:generate`): a changed response breaks the build, not a page.
import type * as api from '../../../clients/typescript/schema.js';

export type Me = api.Me;

export type Role = api.Member['role'];

export type Org = api.Org;

export type IncidentStatus = api.Incident['status'];
export type Priority = api.Incident['priority'];

/** Where an incident's escalation policy is (docs/api.md, Incidents); null without a policy. */
export type Escalation = api.IncidentEscalation;

export type Incident = api.Incident;

export type TimelineEvent = api.TimelineEvent;

export type Responder = api.Responder;

export type Reply = api.Reply;

export type SignalType = api.Signal['type'];

export type Signal = api.Signal;

export type Beacon = api.Beacon;

export type BookingStatus = api.Booking['status'];

export type Booking = api.Booking;

export type Day = api.WeeklyWindow['day'];
export type WeeklyWindow = api.WeeklyWindow;

export type EventType = api.EventType;

export type Member = api.Member;

export type Team = api.Team;

export type TeamMember = api.TeamMember;

/** A key as listed; right after creation it also carries its secret `key`, shown once. */
export type ApiKey = api.ApiKey & Partial<Pick<api.CreatedApiKey, 'key'>>;

/** A live event as the streams send it. */
export interface LiveEvent<T = unknown> {
  type: string;
  payload: T;
  org_ids?: number[];
}

export type Schedule = api.Schedule;
export type Layer = api.Schedule['layers'][number];
export type Restriction = Layer['restrictions'][number];
export type Shift = api.Shift;
export type ScheduleTimeline = api.ScheduleTimeline;
export type OrgOnCall = api.OrgOnCall;
export type Override = api.Override;

export type Integration = api.Integration;

/** A new integration: its secret `key` and the URLs carrying it, shown once. */
export type CreatedIntegration = api.CreatedIntegration;

export type CreatedTeam = api.CreatedTeam;

/** Issue #37: a heartbeat's state, an integration's event log entry, a maintenance window. */
export type Heartbeat = api.Heartbeat;
export type IntegrationEvent = api.IntegrationEvent;
export type MaintenanceWindow = api.MaintenanceWindow;

export type AlertReach = api.AlertReach;

export type EscalationPolicy = api.EscalationPolicy;
export type EscalationLevel = api.EscalationLevel;
export type EscalationTarget = api.EscalationTarget;
export type DispatchSettings = api.DispatchSettings;
export type IncidentSubscription = api.IncidentSubscription;
export type SubscriptionTestResult = api.SubscriptionTestResult;
export type NotificationRule = api.NotificationRule;
export type NotificationRules = api.NotificationRules;

/** Issue #38: an org's sites (geofences), a device's stored track, the device list's field terminals. */
export type Site = api.Site;
export type Track = api.Track;
export type Device = api.Device;
export type FieldTerminal = api.FieldTerminal;
