// The public surface of paging (issue #36): other modules import only this file. Paging sits
// above incidents, integrations, dispatch, users and oncall in the dependency layers
// (docs/architecture.md, "Dependency rules"): it uses them, and what they need of it (checking a
// policy reference, copying a policy onto an incident, cancelling pending notifications, texting a
// phone code) reaches them as `ctx.escalation` (escalationPort, built by context.ts).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { invalidField } from '../../lib/errors.js';
import { cancelPending } from './notifications.js';
import { pagingWaker } from './sweep.js';
import { wasPaged } from './walk.js';
import { sendPhoneCode } from './phone-proof.js';
import { findPolicy } from './policies.repository.js';

export type { PagingTables } from './paging.tables.js';
export { pagingRoutes } from './paging.routes.js';
export { pagingPublicRoutes } from './public.routes.js';
export { sendPhoneCode } from './phone-proof.js';
export { pagePerson, cancelPending, sendDueNotifications, urgencyOf } from './notifications.js';
export { runPaging } from './sweep.js';
export { walkDue } from './walk.js';
export { rulesOf, DEFAULT_RULES } from './rules.js';

/**
 * What lower modules need of paging (incidents, integrations, dispatch settings sit below it in the
 * dependency layers): built by context.ts and handed to them as `ctx.escalation`, so they never
 * import paging (docs/architecture.md, "Dependency rules").
 */
export function escalationPort() {
  const waker = pagingWaker();
  return { checkPolicyRef, policyCopy, cancelPending, sendPhoneCode, wasPaged, wake: waker.wake, idle: waker.idle };
}
export type EscalationPort = ReturnType<typeof escalationPort>;

/** Checks that `id` names an escalation policy of the org, else 422 on `field` (null: no policy, nothing to check). */
export async function checkPolicyRef(db: Kysely<DB>, orgId: number, id: number | null | undefined, field: string): Promise<void> {
  if (id === undefined || id === null) return;
  if (!(await findPolicy(db, orgId, id))) throw invalidField(field, 'is not an escalation policy of this org');
}

/**
 * The incident's columns for a policy: its id and a copy of it as it is now (levels and repeat),
 * which the escalation follows whatever later edits do. 422 on `field` for a policy of another org.
 */
export async function policyCopy(db: Kysely<DB>, orgId: number, id: number | null, field = 'escalation_policy_id'): Promise<{ escalation_policy_id: number | null; escalation_snapshot: string | null }> {
  if (id === null) return { escalation_policy_id: null, escalation_snapshot: null };
  const p = await findPolicy(db, orgId, id);
  if (!p) throw invalidField(field, 'is not an escalation policy of this org');
  return { escalation_policy_id: p.id, escalation_snapshot: JSON.stringify({ name: p.name, repeat: p.repeat, levels: JSON.parse(p.levels) as unknown }) };
}
