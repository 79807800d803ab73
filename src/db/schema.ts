import type { Generated } from 'kysely';
import type { UsersTables } from '../modules/users/index.js';
import type { OrgsTables } from '../modules/orgs/index.js';
import type { AuthTables } from '../modules/auth/index.js';
import type { ApiKeysTables } from '../modules/api-keys/index.js';
import type { DeliveriesTables } from '../modules/deliveries/index.js';
import type { IncidentsTables } from '../modules/incidents/index.js';
import type { DispatchTables } from '../modules/dispatch/index.js';
import type { SignalsTables } from '../modules/signals/index.js';
import type { SchedulingTables } from '../modules/scheduling/index.js';
import type { IntegrationsTables } from '../modules/integrations/index.js';
import type { InboundEmailTables } from '../modules/inbound-email/index.js';
import type { OncallTables } from '../modules/oncall/index.js';
import type { CalendarsTables } from '../modules/calendars/index.js';
import type { RetentionTables } from '../modules/retention/index.js';
import type { DevicesTables } from '../modules/devices/index.js';
import type { TracksTables } from '../modules/tracks/index.js';
import type { PagingTables } from '../modules/paging/index.js';
import type { SubscriptionTables } from '../modules/subscriptions/index.js';
import type { SitesTables } from '../modules/sites/index.js';
import type { ReportsTables } from '../modules/reports/index.js';

/**
 * Row shapes as stored. Both dialects store the same representations:
 * timestamps as ISO-8601 UTC text with milliseconds, booleans as 0/1 integers, JSON as text.
 * Repositories map rows to domain objects, so callers never see 0/1 or JSON strings.
 */
export type Flag = 0 | 1;
export type Plan = 'free' | 'starter' | 'agency' | 'enterprise';
export type Role = 'owner' | 'admin' | 'member';
export type Mode = 'live' | 'test';

// Each module keeps its tables in <module>.tables.ts (exported by its index.ts); their types are re-exported here, so db/schema.js stays the one import path.
export type { UsersTable } from '../modules/users/index.js';
export type { OrgsTable, Routing, TeamsTable, TeamMembersTable, OrgInvitesTable, MembershipsTable, MembershipHistoryTable } from '../modules/orgs/index.js';
export type { SessionsTable, MagicCodesTable, CodePurpose } from '../modules/auth/index.js';
export type { ApiKeysTable } from '../modules/api-keys/index.js';
export type { OutboxKind, OutboxStatus, OutboxTable, AttemptOutcome, OutboxAttemptsTable, PushSubscriptionsTable } from '../modules/deliveries/index.js';
export type { IncidentStatus, Priority, IncidentSource, IncidentsTable, IntegrationTool, TimelineType, IncidentEventsTable, IncidentCountsTable, IncidentListVersionsTable, RepliesTable } from '../modules/incidents/index.js';
export type { DispatchSettingsTable } from '../modules/dispatch/index.js';
export type { SignalType, SignalsTable, BeaconStatesTable, AuditLogTable } from '../modules/signals/index.js';
export type { LocationType, BookingStatus, EventTypesTable, BookingsTable } from '../modules/scheduling/index.js';
export type { IntegrationsTable } from '../modules/integrations/index.js';
export type { InboundEmailStatus, InboundEmailsTable } from '../modules/inbound-email/index.js';
export type { OncallSchedulesTable, OncallLayerVersionsTable, OncallOverridesTable, OncallHandoffNoticesTable } from '../modules/oncall/index.js';
export type { CalendarObjectsTable, CalendarKind, CalendarStatus, CalendarConnectionsTable, CalendarBusyTable } from '../modules/calendars/index.js';
export type { RetentionSettingsTable } from '../modules/retention/index.js';
export type { DevicesTable } from '../modules/devices/index.js';
export type { SitesTable, SitePresenceTable, SiteKind } from '../modules/sites/index.js';
export type { PositionTracksTable } from '../modules/tracks/index.js';

export interface SettingsTable {
  key: string;
  value: string;
}

export interface IdempotencyKeysTable {
  id: Generated<number>;
  scope: string;
  key: string;
  fingerprint: string;
  state: 'pending' | 'done';
  lock_token: string | null;
  locked_at: string;
  status_code: number | null;
  response_body: string | null;
  created_at: string;
}

/** Every table: the shared ones here and each module's (its <module>.tables.ts). */
export interface DB
  extends UsersTables,
    OrgsTables,
    AuthTables,
    ApiKeysTables,
    DeliveriesTables,
    IncidentsTables,
    DispatchTables,
    SignalsTables,
    SchedulingTables,
    IntegrationsTables,
    InboundEmailTables,
    OncallTables,
    CalendarsTables,
    RetentionTables,
    DevicesTables,
    TracksTables,
    PagingTables,
    SubscriptionTables,
    SitesTables,
    ReportsTables {
  settings: SettingsTable;
  idempotency_keys: IdempotencyKeysTable;
}

export const flag = (b: boolean): Flag => (b ? 1 : 0);
