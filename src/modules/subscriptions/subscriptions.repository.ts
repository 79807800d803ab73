import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, Flag } from '../../db/schema.js';
import type { IncidentSubscriptionsTable } from './subscriptions.tables.js';

export type SubscriptionRow = Selectable<IncidentSubscriptionsTable>;

/** Every subscription of an org, both modes, oldest first (what the cache holds per org). */
export function subscriptionsOfOrg(db: Kysely<DB>, orgId: number): Promise<SubscriptionRow[]> {
  return db.selectFrom('incident_subscriptions').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
}

export function listSubscriptions(db: Kysely<DB>, orgId: number, livemode: Flag): Promise<SubscriptionRow[]> {
  return db.selectFrom('incident_subscriptions').selectAll().where('org_id', '=', orgId).where('livemode', '=', livemode).orderBy('id').execute();
}

export function findSubscription(db: Kysely<DB>, orgId: number, livemode: Flag, id: number): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('incident_subscriptions').selectAll().where('id', '=', id).where('org_id', '=', orgId).where('livemode', '=', livemode).executeTakeFirst();
}

/** By id alone (the sender: the row named by a delivery). */
export function subscriptionById(db: Kysely<DB>, id: number): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('incident_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function insertSubscription(db: Kysely<DB>, row: Insertable<IncidentSubscriptionsTable>): Promise<SubscriptionRow> {
  return db.insertInto('incident_subscriptions').values(row).returningAll().executeTakeFirstOrThrow();
}

export function updateSubscription(db: Kysely<DB>, id: number, patch: Updateable<IncidentSubscriptionsTable>): Promise<SubscriptionRow> {
  return db.updateTable('incident_subscriptions').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteSubscription(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('incident_subscriptions').where('id', '=', id).execute();
}

/** Turns a subscription off after a 410 from `url` (not when its URL has changed since). True when it did. */
export async function disableSubscription(db: Kysely<DB>, id: number, url: string, reason: string, nowIso: string): Promise<boolean> {
  const r = await db
    .updateTable('incident_subscriptions')
    .set({ disabled_at: nowIso, disabled_reason: reason, updated_at: nowIso })
    .where('id', '=', id)
    .where('url', '=', url)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Orgs with a subscription to `oncall.shift_started` that is on, in either mode (the shift job's orgs; schedules have no mode). */
export async function orgsWantingShiftStarts(db: Kysely<DB>): Promise<number[]> {
  const rows = await db
    .selectFrom('incident_subscriptions')
    .select('org_id')
    .distinct()
    .where('disabled_at', 'is', null)
    .where('events', 'like', '%"oncall.shift_started"%')
    .execute();
  return rows.map((r) => r.org_id);
}

/** The exactly-once key of one shift start: true only for the transaction that inserted it. */
export async function claimShiftStart(db: Kysely<DB>, row: { schedule_id: number; user_id: number; shift_start: string; created_at: string }): Promise<boolean> {
  const r = await db.insertInto('subscription_shift_starts').values(row).onConflict((oc) => oc.columns(['schedule_id', 'user_id', 'shift_start']).doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}
