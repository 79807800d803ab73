import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// A calendar over a safety limit (issue #31, F1: a hostile time zone, too many repeats, a worker
// out of memory or time) is refused and not read again until its owner changes it or asks for a
// sync: `halted_at` says since when. The background sync skips such rows, also after a restart.
export async function up(db: Kysely<unknown>, _d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('calendar_connections').addColumn('halted_at', 'text').execute();
}
