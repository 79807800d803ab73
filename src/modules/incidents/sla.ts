import type { IncidentStatus, Priority } from '../../db/schema.js';
import { HOUR } from '../../lib/clock.js';

export const SLA_WINDOW_MS: Readonly<Record<Priority, number>> = {
  urgent: 1 * HOUR,
  high: 4 * HOUR,
  normal: 24 * HOUR,
  low: 48 * HOUR,
};

/** The warning starts when this share of the window has passed (the last 15 minutes of an urgent hour). */
export const WARNING_AT = 0.75;

export type SlaStatus = 'ok' | 'warning' | 'breached' | 'met';

/** Due and warning times from the creation time and the priority (recomputed when the priority changes). */
export function slaTimes(createdAt: Date, priority: Priority): { dueAt: Date; warnAt: Date } {
  const window = SLA_WINDOW_MS[priority];
  return { dueAt: new Date(createdAt.getTime() + window), warnAt: new Date(createdAt.getTime() + window * WARNING_AT) };
}

export const isDone = (status: IncidentStatus) => status === 'resolved' || status === 'closed';

/**
 * The SLA clock as the caller sees it now: `ok`, `warning` from 75% of the window, `breached`
 * once past due. A resolved or closed incident is frozen at `met` or `breached` by when it was resolved.
 */
export function slaState(
  i: { status: IncidentStatus; sla_due_at: string; sla_warn_at: string; resolved_at: string | null },
  now: Date,
): { sla_status: SlaStatus; sla_breached: boolean } {
  const due = Date.parse(i.sla_due_at);
  if (isDone(i.status)) {
    const at = i.resolved_at ? Date.parse(i.resolved_at) : now.getTime();
    return at > due ? { sla_status: 'breached', sla_breached: true } : { sla_status: 'met', sla_breached: false };
  }
  const t = now.getTime();
  if (t > due) return { sla_status: 'breached', sla_breached: true };
  if (t >= Date.parse(i.sla_warn_at)) return { sla_status: 'warning', sla_breached: false };
  return { sla_status: 'ok', sla_breached: false };
}

/**
 * The first instant (ms) after `now` at which slaState() of `i` answers differently, or Infinity
 * when it never will: a page of views built at `now` is the same until the least of these.
 */
export function nextSlaChange(i: { status: IncidentStatus; sla_due_at: string; sla_warn_at: string; resolved_at: string | null }, now: number): number {
  const due = Date.parse(i.sla_due_at);
  // Past due is final; so is a resolution time, which freezes the answer.
  if (now > due || (isDone(i.status) && i.resolved_at)) return Infinity;
  const breach = due + 1;
  if (isDone(i.status)) return breach;
  const warn = Date.parse(i.sla_warn_at);
  return now < warn ? Math.min(warn, breach) : breach;
}
