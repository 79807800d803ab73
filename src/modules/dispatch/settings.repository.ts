import type { Kysely } from 'kysely';
import { FixedQuery } from '../../db/fixed.js';
import type { DB } from '../../db/schema.js';

export interface AckTimeouts {
  urgent: number | null;
  high: number | null;
}

/** PagerDuty-like defaults: an urgent incident nobody acknowledged for 5 minutes escalates, a high one after 15. */
export const DEFAULT_ACK_TIMEOUTS: Readonly<AckTimeouts> = { urgent: 5, high: 15 };

/** Compiled once (db/fixed.ts): every urgent or high incident's creation reads it. */
const ACK_TIMEOUTS = new FixedQuery<{ orgId: number }>((db, mark) =>
  db.selectFrom('dispatch_settings').select(['ack_urgent_minutes', 'ack_high_minutes']).where('org_id', '=', mark('orgId')),
);

export async function findAckTimeouts(db: Kysely<DB>, orgId: number): Promise<AckTimeouts> {
  const row = (await ACK_TIMEOUTS.execute<{ ack_urgent_minutes: number | null; ack_high_minutes: number | null }>(db, { orgId })).rows[0];
  return row ? { urgent: row.ack_urgent_minutes, high: row.ack_high_minutes } : { ...DEFAULT_ACK_TIMEOUTS };
}

/** Writes the whole setting (the caller merged the change into the current one). */
export async function saveAckTimeouts(db: Kysely<DB>, orgId: number, t: AckTimeouts, nowIso: string): Promise<void> {
  const values = { ack_urgent_minutes: t.urgent, ack_high_minutes: t.high, updated_at: nowIso };
  await db
    .insertInto('dispatch_settings')
    .values({ org_id: orgId, ...values })
    .onConflict((oc) => oc.column('org_id').doUpdateSet(values))
    .execute();
}

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
