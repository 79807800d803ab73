import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { DEFAULT_ACK_TIMEOUTS } from '../incidents/index.js';

/** Minutes before an on-call shift that its person is told (default 15); null: never. */
export const DEFAULT_HANDOFF_NOTICE_MINUTES = 15;

export async function findHandoffMinutes(db: Kysely<DB>, orgIds: readonly number[]): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>(orgIds.map((id) => [id, DEFAULT_HANDOFF_NOTICE_MINUTES]));
  if (orgIds.length === 0) return out;
  const rows = await db.selectFrom('dispatch_settings').select(['org_id', 'handoff_notice_minutes']).where('org_id', 'in', orgIds).execute();
  for (const r of rows) out.set(r.org_id, r.handoff_notice_minutes);
  return out;
}

export async function saveHandoffMinutes(db: Kysely<DB>, orgId: number, minutes: number | null, nowIso: string): Promise<void> {
  await db
    .insertInto('dispatch_settings')
    .values({ org_id: orgId, ack_urgent_minutes: DEFAULT_ACK_TIMEOUTS.urgent, ack_high_minutes: DEFAULT_ACK_TIMEOUTS.high, handoff_notice_minutes: minutes, updated_at: nowIso })
    .onConflict((oc) => oc.column('org_id').doUpdateSet({ handoff_notice_minutes: minutes, updated_at: nowIso }))
    .execute();
}

/** The org's default escalation policy; null: none (the built-in escalation). */
export async function findDefaultPolicy(db: Kysely<DB>, orgId: number): Promise<number | null> {
  const row = await db.selectFrom('dispatch_settings').select('default_escalation_policy_id').where('org_id', '=', orgId).executeTakeFirst();
  return row?.default_escalation_policy_id ?? null;
}

export async function saveDefaultPolicy(db: Kysely<DB>, orgId: number, policyId: number | null, nowIso: string): Promise<void> {
  await db
    .insertInto('dispatch_settings')
    .values({ org_id: orgId, ack_urgent_minutes: DEFAULT_ACK_TIMEOUTS.urgent, ack_high_minutes: DEFAULT_ACK_TIMEOUTS.high, default_escalation_policy_id: policyId, updated_at: nowIso })
    .onConflict((oc) => oc.column('org_id').doUpdateSet({ default_escalation_policy_id: policyId, updated_at: nowIso }))
    .execute();
}
