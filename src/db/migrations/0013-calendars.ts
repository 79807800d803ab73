import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Hosts' external calendars (ICS subscriptions, CalDAV accounts) and the busy intervals their
// syncs found. Busy rows use the bookings' timestamp text and are cut into pieces of at most a
// day, so the one busy-time query keeps the bookings' bounded index range (start within a day).
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('calendar_connections')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('username', 'text')
    // AES-256-GCM of the password under the instance key (iv.tag.ciphertext, base64url).
    .addColumn('secret', 'text')
    // JSON: CalDAV discovery {home, items: [{url, name, ctag}]}; then the user's picks.
    .addColumn('calendars', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('busy_calendars', 'text')
    .addColumn('write_calendar', 'text')
    .addColumn('etag', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('failing_since', 'text')
    .addColumn('busy_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_synced_at', 'text')
    // The last full read (the window moves daily: an unchanged calendar is still read again now and then).
    .addColumn('refreshed_at', 'text')
    .addColumn('sync_lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('calendar_connections_user_idx').on('calendar_connections').column('user_id').execute();
  await db.schema.createIndex('calendar_connections_sync_idx').on('calendar_connections').column('last_synced_at').execute();

  await db.schema
    .createTable('calendar_busy')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('connection_id', d.idType, (c) => c.notNull().references('calendar_connections.id').onDelete('cascade'))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('start_time', 'text', (c) => c.notNull())
    .addColumn('end_time', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('calendar_busy_user_time_idx').on('calendar_busy').columns(['user_id', 'start_time']).execute();
  await db.schema.createIndex('calendar_busy_connection_idx').on('calendar_busy').column('connection_id').execute();
}
