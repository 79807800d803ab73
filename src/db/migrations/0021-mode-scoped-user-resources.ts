import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Calendar connections and push subscriptions carry the mode of the credential that made them
// (issue #31, F3): a test key sees and changes only test-mode ones, live alerts reach only live
// subscriptions, and a test-mode calendar's busy time never blocks live bookings. Rows made
// before were made by sessions or live keys in practice: they are live.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('calendar_connections').addColumn('livemode', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('calendar_busy').addColumn('livemode', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.dropIndex('calendar_connections_user_idx').execute();
  await db.schema.createIndex('calendar_connections_user_idx').on('calendar_connections').columns(['user_id', 'livemode']).execute();

  // One browser (endpoint) may hold one subscription per mode. SQLite cannot drop the column's
  // UNIQUE constraint, so the table is built again (ids are internal: nothing refers to them).
  await db.schema
    .createTable('push_subscriptions_0021')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('p256dh', 'text', (c) => c.notNull())
    .addColumn('auth', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into push_subscriptions_0021 (user_id, livemode, endpoint, p256dh, auth, created_at)
    select user_id, 1, endpoint, p256dh, auth, created_at from push_subscriptions order by id`.execute(db);
  await db.schema.dropTable('push_subscriptions').execute();
  await db.schema.alterTable('push_subscriptions_0021').renameTo('push_subscriptions').execute();
  await db.schema.createIndex('push_subscriptions_endpoint_mode_idx').on('push_subscriptions').columns(['endpoint', 'livemode']).unique().execute();
  await db.schema.createIndex('push_subscriptions_user_idx').on('push_subscriptions').columns(['user_id', 'livemode']).execute();
}
