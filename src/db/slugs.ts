import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

/** Slugs of `table` equal to `base` or of the form `base-N` (what firstFreeSlug needs to pick a free one). */
export async function slugsLike(db: Kysely<DB>, table: 'users' | 'orgs', base: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom(table)
    .select('slug')
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
    .execute();
  return new Set(rows.map((r) => r.slug));
}
