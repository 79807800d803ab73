import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** A person's open incidents assigned to them with a position, and where their position last put them for each. */
export async function assignedOpen(db: Kysely<DB>, userId: number) {
  const rows = await db
    .selectFrom('incidents as i')
    .leftJoin('incident_presence as p', (j) => j.onRef('p.incident_id', '=', 'i.id').on('p.user_id', '=', userId))
    .select(['i.id', 'i.org_id', 'i.livemode', 'i.lat', 'i.lng', 'i.arrival_radius_m', 'i.updated_at', 'p.state'])
    .where('i.assignee_id', '=', userId)
    .where('i.status', 'in', ['open', 'in_progress'])
    .where('i.lat', 'is not', null)
    .where('i.lng', 'is not', null)
    .execute();
  return rows.map((r) => ({ ...r, lat: r.lat!, lng: r.lng! }));
}

/**
 * Moves a person's presence at an incident to `to`, if it was not there: a conditional update of
 * their row, or (no row yet: they were outside) its insert under the primary key. Of concurrent
 * claims exactly one answers true.
 */
export async function claimPresence(db: Kysely<DB>, incidentId: number, userId: number, to: 'inside' | 'outside', at: string): Promise<boolean> {
  const r = await db.updateTable('incident_presence').set({ state: to, updated_at: at }).where('incident_id', '=', incidentId).where('user_id', '=', userId).where('state', '<>', to).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 1) return true;
  if (to === 'outside') return false;
  const ins = await db.insertInto('incident_presence').values({ incident_id: incidentId, user_id: userId, state: to, updated_at: at }).onConflict((oc) => oc.columns(['incident_id', 'user_id']).doNothing()).executeTakeFirst();
  return Number(ins.numInsertedOrUpdatedRows ?? 0n) === 1;
}
