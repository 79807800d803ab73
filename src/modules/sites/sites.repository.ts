import type { Insertable, Kysely, Updateable } from 'kysely';
import type { DB, Flag } from '../../db/schema.js';
import type { Position } from './geometry.js';
import type { SiteKind, SitesTable } from './sites.tables.js';

/** A GeoJSON Polygon of one ring (holes are not kept). */
export interface Polygon {
  type: 'Polygon';
  coordinates: Position[][];
}

type Stored = Omit<SitesTable, 'id'> & { id: number };
/** A site as a value: its area parsed from its JSON column. */
export type SiteRow = Omit<Stored, 'area'> & { area: Polygon | null };

const valueOf = (s: Stored): SiteRow => ({ ...s, area: s.area === null ? null : (JSON.parse(s.area) as Polygon) });
const areaText = (a: Polygon | null) => (a === null ? null : JSON.stringify(a));

export type SiteInsert = Omit<Insertable<SitesTable>, 'area'> & { area: Polygon | null; kind: SiteKind };
export type SitePatch = Omit<Updateable<SitesTable>, 'id' | 'org_id' | 'livemode' | 'area'> & { area?: Polygon | null };

/** The org's sites in a mode (at most 1,000 per org and mode: the service refuses more), by id. */
export async function sitesOf(db: Kysely<DB>, orgId: number, livemode: Flag): Promise<SiteRow[]> {
  return (await db.selectFrom('sites').selectAll().where('org_id', '=', orgId).where('livemode', '=', livemode).orderBy('id').execute()).map(valueOf);
}

/** The org's sites of both modes (the site cache). */
export async function allSitesOfOrg(db: Kysely<DB>, orgId: number): Promise<SiteRow[]> {
  return (await db.selectFrom('sites').selectAll().where('org_id', '=', orgId).orderBy('id').execute()).map(valueOf);
}

export async function countSites(db: Kysely<DB>, orgId: number, livemode: Flag): Promise<number> {
  const r = await db.selectFrom('sites').select((eb) => eb.fn.countAll<number | string>().as('n')).where('org_id', '=', orgId).where('livemode', '=', livemode).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function findSite(db: Kysely<DB>, orgId: number, livemode: Flag, id: number): Promise<SiteRow | undefined> {
  const row = await db.selectFrom('sites').selectAll().where('id', '=', id).where('org_id', '=', orgId).where('livemode', '=', livemode).executeTakeFirst();
  return row && valueOf(row);
}

export async function insertSite(db: Kysely<DB>, row: SiteInsert): Promise<SiteRow> {
  return valueOf(await db.insertInto('sites').values({ ...row, area: areaText(row.area) }).returningAll().executeTakeFirstOrThrow());
}

export async function updateSite(db: Kysely<DB>, id: number, patch: SitePatch): Promise<SiteRow> {
  const { area, ...rest } = patch;
  const set = area === undefined ? rest : { ...rest, area: areaText(area) };
  return valueOf(await db.updateTable('sites').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow());
}

export async function deleteSite(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('site_presence').where('site_id', '=', id).execute();
  await db.deleteFrom('sites').where('id', '=', id).execute();
}

/** One device of one mode, as presence rows are keyed. */
export interface PresenceKey {
  userId: number;
  deviceKey: string;
  livemode: Flag;
}

/** The sites a device is recorded inside (read once per device by each instance, then kept in memory). */
export async function sitesInside(db: Kysely<DB>, k: PresenceKey): Promise<number[]> {
  const rows = await db.selectFrom('site_presence').select('site_id').where('user_id', '=', k.userId).where('device_key', '=', k.deviceKey).where('livemode', '=', k.livemode).where('inside', '=', 1).execute();
  return rows.map((r) => r.site_id);
}

/**
 * Claims an entry: inserts the presence inside, or turns an outside one inside. True only for the
 * one write that changed it (a conditional upsert): an instance that finds it inside already records
 * nothing.
 */
export async function claimEnter(db: Kysely<DB>, siteId: number, k: PresenceKey, at: string): Promise<boolean> {
  const r = await db
    .insertInto('site_presence')
    .values({ site_id: siteId, user_id: k.userId, device_key: k.deviceKey, livemode: k.livemode, inside: 1, changed_at: at })
    .onConflict((oc) => oc.columns(['site_id', 'user_id', 'device_key', 'livemode']).doUpdateSet({ inside: 1, changed_at: at }).where('site_presence.inside', '=', 0))
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Claims an exit: turns an inside presence outside; true only for the one write that changed it. */
export async function claimExit(db: Kysely<DB>, siteId: number, k: PresenceKey, at: string): Promise<boolean> {
  const r = await db
    .updateTable('site_presence')
    .set({ inside: 0, changed_at: at })
    .where('site_id', '=', siteId)
    .where('user_id', '=', k.userId)
    .where('device_key', '=', k.deviceKey)
    .where('livemode', '=', k.livemode)
    .where('inside', '=', 1)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
