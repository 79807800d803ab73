import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Persisted signals (never beacons), the live state of each beaconing device, and the audit log.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('signals')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('user_id', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('lat', 'double precision')
    .addColumn('lng', 'double precision')
    .addColumn('accuracy', 'double precision')
    .addColumn('note', 'text')
    .addColumn('image_url', 'text')
    .addColumn('ticket_id', d.idType, (c) => c.references('incidents.id').onDelete('set null'))
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signals_scope_idx').on('signals').columns(['org_id', 'livemode', 'id']).execute();
  await db.schema.createIndex('signals_type_idx').on('signals').columns(['org_id', 'livemode', 'type', 'id']).execute();

  // One row per (mode, user, device): its last position and whether it is beaconing.
  await db.schema
    .createTable('beacon_states')
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('device_key', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text')
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('lat', 'double precision')
    .addColumn('lng', 'double precision')
    .addColumn('accuracy', 'double precision')
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('position_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('beacon_states_pk', ['livemode', 'user_id', 'device_key'])
    .execute();
  await db.schema.createIndex('beacon_states_org_idx').on('beacon_states').columns(['org_id', 'livemode', 'active']).execute();
  await db.schema.createIndex('beacon_states_silence_idx').on('beacon_states').columns(['active', 'last_seen_at']).execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('user_id', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('device_id', 'text')
    .addColumn('meta', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_scope_idx').on('audit_log').columns(['org_id', 'livemode', 'id']).execute();
}
