import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Tracker apps (Traccar Client, OwnTracks, GPSLogger): one row per registered device. The token
// is a secret shown once, stored as its SHA-256 like an API key; it only posts this device's fixes.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('devices')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    // The beacon's meta.device_id: the device's key in beacon_states.
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('devices_token_idx').on('devices').column('token_hash').unique().execute();
  await db.schema.createIndex('devices_scope_idx').on('devices').columns(['org_id', 'livemode', 'id']).execute();
  // One active device per (user, mode, device_id): two would share one beacon state.
  await db.schema
    .createIndex('devices_active_device_idx')
    .on('devices')
    .columns(['user_id', 'livemode', 'device_id'])
    .unique()
    .where(sql.ref('revoked_at'), 'is', null)
    .execute();
}
