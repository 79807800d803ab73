import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Tracks (issue #38, modules/tracks): positions are first appended, every flush (a second), to
// `track_staging`, a table with no index but its id, so a flush writes a few pages in order whatever
// the number of devices; every move (a minute) takes the staged rows to `position_tracks` in one
// statement, sorted by its index by device, so each device's minute lands on one page of that index.
// Appending straight to `position_tracks` wrote about one page of its device index per position (the
// positions of one flush are of as many devices), and the cost per position grew with the stored
// track (docs/trackers.md, "What it costs"). Same columns and foreign keys as `position_tracks`.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('track_staging')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('lat', 'double precision', (c) => c.notNull())
    .addColumn('lng', 'double precision', (c) => c.notNull())
    .addColumn('accuracy', 'double precision')
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .execute();
}
