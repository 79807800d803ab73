import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Tracks (issue #38, modules/tracks): the positions of field terminals and tracker apps, kept only
// for an org that opts in.
// - `retention_settings.tracks_days`: 0 (the default) keeps no track; 1..3650 keeps each position
//   that many days (the retention sweep deletes older ones).
// - `position_tracks`: one row per accepted position, appended in batches (one multi-row insert per
//   flush). Read by device and time range (index on livemode, user, device, time), swept by org and
//   time (index on org, time).
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('retention_settings').addColumn('tracks_days', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema
    .createTable('position_tracks')
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
  await db.schema.createIndex('position_tracks_device_idx').on('position_tracks').columns(['livemode', 'user_id', 'device_id', 'recorded_at']).execute();
  await db.schema.createIndex('position_tracks_org_idx').on('position_tracks').columns(['org_id', 'livemode', 'recorded_at']).execute();
}
