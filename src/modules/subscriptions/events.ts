import type { TimelineEvent } from '../incidents/index.js';

/** What a subscription may receive (issue #37); the order is the one docs/api.md lists. */
export const SUBSCRIPTION_EVENTS = [
  'incident.created',
  'incident.acknowledged',
  'incident.assigned',
  'incident.escalated',
  'incident.resolved',
  'incident.reopened',
  'incident.reply',
  'signal.alert',
  'oncall.shift_started',
  'site.enter',
  'site.exit',
] as const;
export type SubscriptionEvent = (typeof SUBSCRIPTION_EVENTS)[number];

/** An incident event; `oncall.shift_started` and the site events are not about an incident. */
export type IncidentEventName = Exclude<SubscriptionEvent, 'oncall.shift_started' | 'site.enter' | 'site.exit'>;

const done = (s: unknown) => s === 'resolved' || s === 'closed';

/**
 * The subscription event a timeline event is, if any. Every change of an incident writes its
 * timeline event in its own transaction (modules/incidents), so this is where they are seen:
 * `status_changed` into resolved or closed is `incident.resolved`, out of them `incident.reopened`
 * (resolved to closed is neither); a reply only when public; a signal only when it is an alert.
 */
export function eventOfTimeline(e: Pick<TimelineEvent, 'type' | 'data'>): IncidentEventName | undefined {
  switch (e.type) {
    case 'created':
      return 'incident.created';
    case 'acknowledged':
      return 'incident.acknowledged';
    case 'assigned':
      return 'incident.assigned';
    case 'escalated':
      return 'incident.escalated';
    case 'status_changed':
      if (done(e.data.to) && !done(e.data.from)) return 'incident.resolved';
      if (!done(e.data.to) && done(e.data.from)) return 'incident.reopened';
      return undefined;
    case 'reply':
      return e.data.public === true ? 'incident.reply' : undefined;
    case 'signal':
      return e.data.signal_type === 'alert' ? 'signal.alert' : undefined;
    case 'priority_changed':
    case 'unassigned':
    case 'en_route':
    case 'on_scene':
    case 'sla_warning':
    case 'sla_breached':
    case 'alert_repeated':
    case 'paged':
    case 'notified':
    case 'escalation_skipped':
    case 'escalation_exhausted':
    case 'departed':
    case 'on_scene_undone':
      return undefined;
  }
}
