import type { Kysely } from 'kysely';
import type { DB, Mode, TimelineType } from '../../db/schema.js';
import { flag } from '../../db/schema.js';

/** The org's `site.enter` / `site.exit` audit entries of the range, oldest first, with the person's name. */
export async function siteEvents(db: Kysely<DB>, orgId: number, mode: Mode, from: string, to: string) {
  return db
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
}

/** `departed` is written by the arrival detection (issue #38), which may not be in this build's TimelineType yet. */
const VISIT_EVENTS = ['on_scene', 'departed'] as TimelineType[];

/** The org's `on_scene` / `departed` timeline events of the range, oldest first, with the incident's title. */
export async function incidentArrivals(db: Kysely<DB>, orgId: number, mode: Mode, from: string, to: string) {
  return db
    .selectFrom('incident_events as e')
    .innerJoin('incidents as i', 'i.id', 'e.incident_id')
    .select(['e.id', 'e.incident_id', 'i.title', 'e.type', 'e.actor_id', 'e.data', 'e.created_at'])
    .where('e.org_id', '=', orgId)
    .where('e.livemode', '=', flag(mode === 'live'))
    .where('e.type', 'in', VISIT_EVENTS)
    .where('e.created_at', '>=', from)
    .where('e.created_at', '<=', to)
    .orderBy('e.created_at')
    .orderBy('e.id')
    .execute();
}

export async function userNames(db: Kysely<DB>, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}
