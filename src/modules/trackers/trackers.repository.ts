import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** Slugs of the given users (OwnTracks names a teammate beaconing without a device id after it). */
export async function userSlugs(db: Kysely<DB>, userIds: number[]): Promise<Map<number, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'slug']).where('id', 'in', userIds).execute();
  return new Map(rows.map((r) => [r.id, r.slug]));
}
