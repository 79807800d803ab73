import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../lib/schemas.js';

export const TIMELINE_TYPES = [
  'created',
  'status_changed',
  'priority_changed',
  'assigned',
  'unassigned',
  'acknowledged',
  'en_route',
  'on_scene',
  'reply',
  'signal',
  'escalated',
  'sla_warning',
  'sla_breached',
  'alert_repeated',
  'paged',
  'notified',
  'escalation_skipped',
  'escalation_exhausted',
  'departed',
  'on_scene_undone',
] as const;

export const TimelineEvent = Type.Object({
  id: Type.Integer(),
  incident_id: Type.Integer(),
  type: StringEnum(TIMELINE_TYPES),
  at: Type.String({ description: 'ISO 8601 UTC' }),
  actor: Type.Union([Type.Object({ user_id: Type.Integer(), user_name: Type.String() }), Type.Null()], { description: 'null for the system (sweepers, integrations)' }),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'depends on `type`: see docs/api.md, Timeline' }),
}, { title: 'TimelineEvent', description: 'One entry of an incident timeline' });
export type TimelineEvent = Static<typeof TimelineEvent>;

export const Timeline = Type.Object({ events: Type.Array(TimelineEvent) }, { title: 'Timeline' });
