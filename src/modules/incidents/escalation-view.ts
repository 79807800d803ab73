// The incident's copy of its escalation policy as a value, and the answer's `escalation` (issue #36).
import { snapshotOf } from './escalation.repository.js';
import type { IncidentRow } from './incidents.repository.js';

/** The incident answer's `escalation`: where the walk of its policy stands (null without a policy). */
export function escalationView(r: Pick<IncidentRow, 'escalation_policy_id' | 'escalation_snapshot' | 'escalation_level' | 'escalation_loop' | 'escalate_at'>) {
  const p = r.escalation_policy_id === null ? null : snapshotOf(r.escalation_snapshot);
  if (p === null || r.escalation_policy_id === null) return null;
  return {
    policy_id: r.escalation_policy_id,
    policy_name: p.name,
    level: r.escalation_level,
    levels: p.levels.length,
    loop: r.escalation_loop,
    repeat: p.repeat,
    next_at: r.escalate_at,
  };
}
