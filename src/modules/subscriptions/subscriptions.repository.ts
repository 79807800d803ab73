import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, Flag } from '../../db/schema.js';
import type { IncidentSubscriptionsTable } from './subscriptions.tables.js';

type Stored = Selectable<IncidentSubscriptionsTable>;
/** A subscription as a value: its events parsed from their JSON column (here, nowhere else). */
export type SubscriptionRow = Omit<Stored, 'events'> & { events: string[] };
type Written<T> = Omit<T, 'events'> & { events?: string[] };

const valueOf = (r: Stored): SubscriptionRow => ({ ...r, events: JSON.parse(r.events) as string[] });
const stored = <T extends { events?: string[] }>(row: T) => {
  const { events, ...rest } = row;
  return events === undefined ? rest : { ...rest, events: JSON.stringify(events) };
};

/** Every subscription of an org, both modes, oldest first (what the cache holds per org). */
export async function subscriptionsOfOrg(db: Kysely<DB>, orgId: number): Promise<SubscriptionRow[]> {
  return (await db.selectFrom('incident_subscriptions').selectAll().where('org_id', '=', orgId).orderBy('id').execute()).map(valueOf);
}

export async function listSubscriptions(db: Kysely<DB>, orgId: number, livemode: Flag): Promise<SubscriptionRow[]> {
  return (await db.selectFrom('incident_subscriptions').selectAll().where('org_id', '=', orgId).where('livemode', '=', livemode).orderBy('id').execute()).map(valueOf);
}

export async function findSubscription(db: Kysely<DB>, orgId: number, livemode: Flag, id: number): Promise<SubscriptionRow | undefined> {
  const r = await db.selectFrom('incident_subscriptions').selectAll().where('id', '=', id).where('org_id', '=', orgId).where('livemode', '=', livemode).executeTakeFirst();
  return r && valueOf(r);
}

/** By id alone (the sender: the row named by a delivery). */
export async function subscriptionById(db: Kysely<DB>, id: number): Promise<SubscriptionRow | undefined> {
  const r = await db.selectFrom('incident_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
  return r && valueOf(r);
}

export async function insertSubscription(db: Kysely<DB>, row: Written<Insertable<IncidentSubscriptionsTable>> & { events: string[] }): Promise<SubscriptionRow> {
  return valueOf(await db.insertInto('incident_subscriptions').values(stored(row) as Insertable<IncidentSubscriptionsTable>).returningAll().executeTakeFirstOrThrow());
}

export async function updateSubscription(db: Kysely<DB>, id: number, patch: Written<Updateable<IncidentSubscriptionsTable>>): Promise<SubscriptionRow> {
  return valueOf(await db.updateTable('incident_subscriptions').set(stored(patch) as Updateable<IncidentSubscriptionsTable>).where('id', '=', id).returningAll().executeTakeFirstOrThrow());
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
