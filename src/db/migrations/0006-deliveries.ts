import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Every attempt of every delivery, browsers' push subscriptions, phone alert counting, and the
// version of each user's calendar feed link (bumping it revokes the old link).
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('outbox_attempts')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('outbox_id', d.idType, (c) => c.notNull().references('outbox.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('outbox_attempts_outbox_idx').on('outbox_attempts').columns(['outbox_id', 'attempt']).execute();

  await db.schema
    .createTable('push_subscriptions')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('endpoint', 'text', (c) => c.notNull().unique())
    .addColumn('p256dh', 'text', (c) => c.notNull())
    .addColumn('auth', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('push_subscriptions_user_idx').on('push_subscriptions').column('user_id').execute();

  await db.schema.alterTable('users').addColumn('calendar_feed_version', 'integer', (c) => c.notNull().defaultTo(1)).execute();
}
