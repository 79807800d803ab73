import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Sites (geofences, issue #38, modules/sites).
// - `sites`: per org and mode; a circle (`lat`, `lng`, `radius_m`) or a polygon (`area`, the GeoJSON
//   Polygon as JSON text), `kind` says which. Read per org (the per-instance site cache).
// - `site_presence`: whether a device is inside a site, one row per (site, user, device key, mode),
//   written only on a transition: entering inserts it inside (or turns it inside when it was
//   outside), leaving turns it outside, each a conditional write, so a transition is recorded once
//   across instances. Deleting a site deletes its rows.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('sites')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('lat', 'double precision')
    .addColumn('lng', 'double precision')
    .addColumn('radius_m', 'double precision')
    .addColumn('area', 'text')
    .addColumn('created_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sites_org_idx').on('sites').columns(['org_id', 'livemode', 'id']).execute();

  await db.schema
    .createTable('site_presence')
    .addColumn('site_id', d.idType, (c) => c.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('device_key', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('inside', 'integer', (c) => c.notNull())
    .addColumn('changed_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('site_presence_pk', ['site_id', 'user_id', 'device_key', 'livemode'])
    .execute();
  await db.schema.createIndex('site_presence_device_idx').on('site_presence').columns(['user_id', 'device_key', 'livemode', 'inside']).execute();
}
