import type { Kysely } from 'kysely';
import type { DB, Mode } from '../../db/schema.js';
import { flag } from '../../db/schema.js';

/** A stored JSON object as a value (anything else, or text that is not JSON, as an empty object). */
const objectOf = (json: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(json) as unknown;
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/** The org's `site.enter` / `site.exit` audit entries of the range, oldest first, with the person's name and the meta as a value. */
export async function siteEvents(db: Kysely<DB>, orgId: number, mode: Mode, from: string, to: string) {
  const rows = await db
    .selectFrom('audit_log as a')
    .leftJoin('users as u', 'u.id', 'a.user_id')
    .select(['a.id', 'a.action', 'a.user_id', 'u.name as user_name', 'a.device_id', 'a.meta', 'a.created_at'])
    .where('a.org_id', '=', orgId)
    .where('a.livemode', '=', flag(mode === 'live'))
    .where('a.action', 'in', ['site.enter', 'site.exit'])
    .where('a.created_at', '>=', from)
    .where('a.created_at', '<=', to)
    .orderBy('a.created_at')
    .orderBy('a.id')
    .execute();
  return rows.map((r) => ({ ...r, meta: objectOf(r.meta) }));
}

/** The org's `on_scene` / `departed` timeline events of the range, oldest first, with the incident's title and the data as a value. */
export async function incidentArrivals(db: Kysely<DB>, orgId: number, mode: Mode, from: string, to: string) {
  const rows = await db
    .selectFrom('incident_events as e')
    .innerJoin('incidents as i', 'i.id', 'e.incident_id')
    .select(['e.id', 'e.incident_id', 'i.title', 'e.type', 'e.actor_id', 'e.data', 'e.created_at'])
    .where('e.org_id', '=', orgId)
    .where('e.livemode', '=', flag(mode === 'live'))
    .where('e.type', 'in', ['on_scene', 'departed'])
    .where('e.created_at', '>=', from)
    .where('e.created_at', '<=', to)
    .orderBy('e.created_at')
    .orderBy('e.id')
    .execute();
  return rows.map((r) => ({ ...r, data: objectOf(r.data) }));
}
