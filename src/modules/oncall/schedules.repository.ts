import type { Kysely, Selectable } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { DB, OncallLayerVersionsTable, OncallOverridesTable, OncallSchedulesTable } from '../../db/schema.js';

export type ScheduleRow = Selectable<OncallSchedulesTable>;
import type { LayerSpec } from './resolver.js';

/** A version of a schedule's layers, the layers as values (stored as JSON text). */
export type VersionRow = Omit<Selectable<OncallLayerVersionsTable>, 'layers'> & { layers: LayerSpec[] };
export type OverrideRow = Selectable<OncallOverridesTable>;

/** A schedule of the org not deleted, by id (digits) or slug; an id wins over another schedule's slug of the same digits. */
export async function findSchedule(db: Kysely<DB>, orgId: number, ref: string): Promise<ScheduleRow | undefined> {
  const byId = /^\d{1,10}$/.test(ref);
  const rows = await db
    .selectFrom('oncall_schedules')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
    .where((eb) => (byId ? eb.or([eb('id', '=', Number(ref)), eb('slug', '=', ref)]) : eb('slug', '=', ref)))
    .execute();
  return rows.find((r) => String(r.id) === ref) ?? rows[0];
}

export async function findScheduleById(db: Kysely<DB>, id: number): Promise<ScheduleRow | undefined> {
  return db.selectFrom('oncall_schedules').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listSchedules(db: Kysely<DB>, orgIds: readonly number[]): Promise<ScheduleRow[]> {
  if (orgIds.length === 0) return [];
  return db.selectFrom('oncall_schedules').selectAll().where('org_id', 'in', orgIds).where('deleted_at', 'is', null).orderBy('org_id').orderBy('name').orderBy('id').execute();
}

/** Every schedule the org ever had, deleted ones included (reports of the past). */
export async function allSchedulesOf(db: Kysely<DB>, orgId: number): Promise<ScheduleRow[]> {
  return db.selectFrom('oncall_schedules').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
}

export async function slugsOf(db: Kysely<DB>, orgId: number): Promise<Set<string>> {
  const rows = await db.selectFrom('oncall_schedules').select('slug').where('org_id', '=', orgId).where('deleted_at', 'is', null).execute();
  return new Set(rows.map((r) => r.slug));
}

export async function insertSchedule(db: Kysely<DB>, row: { org_id: number; name: string; slug: string; time_zone: string; description: string | null; now: string }): Promise<number> {
  const { now, ...values } = row;
  const r = await db
    .insertInto('oncall_schedules')
    .values({ ...values, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return r.id;
}

/** Changes the schedule's row and moves its version (a new layer version goes in the same transaction). */
export async function updateSchedule(db: Kysely<DB>, id: number, set: Partial<Pick<ScheduleRow, 'name' | 'slug' | 'time_zone' | 'description' | 'updated_at' | 'deleted_at'>>): Promise<void> {
  await db.updateTable('oncall_schedules').set((eb) => ({ ...set, version: eb('version', '+', 1) })).where('id', '=', id).execute();
}

/** Moves the schedule's version: in the transaction of every write that changes who is on call in it (around-memo.ts). */
export async function bumpVersion(db: Kysely<DB>, id: number): Promise<void> {
  await db.updateTable('oncall_schedules').set((eb) => ({ version: eb('version', '+', 1) })).where('id', '=', id).execute();
}

export async function bumpFeedVersion(db: Kysely<DB>, id: number): Promise<void> {
  await db.updateTable('oncall_schedules').set((eb) => ({ feed_version: eb('feed_version', '+', 1) })).where('id', '=', id).execute();
}

export async function insertVersion(db: Kysely<DB>, v: { schedule_id: number; effective_from: string; time_zone: string; layers: readonly LayerSpec[]; created_by: number | null }): Promise<void> {
  await db
    .insertInto('oncall_layer_versions')
    .values({ ...v, layers: JSON.stringify(v.layers), created_at: v.effective_from })
    .execute();
}

/**
 * Versions are never changed once written, so each one's parsed layers are kept by its row id and
 * shared by every question about it (the resolver also keeps what it compiled per layer object).
 * Callers must not change them. A hit counts only when the stored text is the one parsed: the cache
 * is per process, and an id may name another version in another database of the same process (the
 * benchmarks run one after another in one process) or after SQLite reuses the id of a deleted row.
 */
const parsedLayers = new LRUCache<number, { json: string; layers: LayerSpec[] }>({ max: 5_000 });
function layersOf(id: number, json: string): LayerSpec[] {
  const hit = parsedLayers.get(id);
  if (hit && hit.json === json) return hit.layers;
  const layers = JSON.parse(json) as LayerSpec[];
  parsedLayers.set(id, { json, layers });
  return layers;
}

/** Every version of these schedules, in the order they took effect. */
export async function versionsOf(db: Kysely<DB>, scheduleIds: readonly number[]): Promise<VersionRow[]> {
  if (scheduleIds.length === 0) return [];
  const rows = await db.selectFrom('oncall_layer_versions').selectAll().where('schedule_id', 'in', scheduleIds).orderBy('schedule_id').orderBy('effective_from').orderBy('id').execute();
  return rows.map((r) => ({ ...r, layers: layersOf(r.id, r.layers) }));
}

/** The overrides of these schedules that were in force at some time in [from, to). */
export async function overridesOf(db: Kysely<DB>, scheduleIds: readonly number[], from: string, to: string): Promise<OverrideRow[]> {
  if (scheduleIds.length === 0) return [];
  return db
    .selectFrom('oncall_overrides')
    .selectAll()
    .where('schedule_id', 'in', scheduleIds)
    .where('end_time', '>', from)
    .where('start_time', '<', to)
    .where((eb) => eb.or([eb('deleted_at', 'is', null), eb.and([eb('deleted_at', '>', from), eb('deleted_at', '>', eb.ref('start_time'))])]))
    .orderBy('id')
    .execute();
}

/** The overrides of a schedule not deleted, overlapping [from, to), for its list. */
export async function listOverrides(db: Kysely<DB>, scheduleId: number, from: string, to: string): Promise<OverrideRow[]> {
  return db
    .selectFrom('oncall_overrides')
    .selectAll()
    .where('schedule_id', '=', scheduleId)
    .where('deleted_at', 'is', null)
    .where('end_time', '>', from)
    .where('start_time', '<', to)
    .orderBy('start_time')
    .orderBy('id')
    .execute();
}

export async function insertOverride(db: Kysely<DB>, o: { schedule_id: number; user_id: number; start_time: string; end_time: string; created_by: number; created_at: string }): Promise<OverrideRow> {
  return db.insertInto('oncall_overrides').values(o).returningAll().executeTakeFirstOrThrow();
}

/** Marks an override deleted (it counted until now); false when there is none to delete. */
export async function deleteOverride(db: Kysely<DB>, scheduleId: number, id: number, now: string): Promise<boolean> {
  const r = await db.updateTable('oncall_overrides').set({ deleted_at: now }).where('id', '=', id).where('schedule_id', '=', scheduleId).where('deleted_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Names of these users (absent: deleted accounts). */
export async function userNames(db: Kysely<DB>, ids: Iterable<number>): Promise<Map<number, string>> {
  const list = [...new Set(ids)];
  if (list.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name']).where('id', 'in', list).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Every schedule not deleted, of every org (the handoff job). */
export async function listLiveSchedules(db: Kysely<DB>): Promise<ScheduleRow[]> {
  return db.selectFrom('oncall_schedules').selectAll().where('deleted_at', 'is', null).orderBy('id').execute();
}

export async function noticeRecipient(db: Kysely<DB>, userId: number): Promise<{ id: number; email: string; timezone: string } | undefined> {
  return db.selectFrom('users').select(['id', 'email', 'timezone']).where('id', '=', userId).executeTakeFirst();
}

/** The exactly-once key of a handoff notice: true only for the one transaction that inserted it. */
export async function claimNotice(db: Kysely<DB>, row: { schedule_id: number; user_id: number; shift_start: string; created_at: string }): Promise<boolean> {
  const r = await db.insertInto('oncall_handoff_notices').values(row).onConflict((oc) => oc.columns(['schedule_id', 'user_id', 'shift_start']).doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}
