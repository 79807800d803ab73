import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Incident subscriptions (issue #37, modules/subscriptions): an org's webhooks for incident events.
// - `incident_subscriptions`: one receiver (URL, format, the events it wants as a JSON array), in
//   the mode of the key that made it (`livemode`), with its signing secret (format `standard`).
//   `disabled_at`/`disabled_reason`: set when the receiver answered 410 Gone; it then gets nothing
//   until a PATCH turns it on again. Read per org and mode on the hot path (a cache in front,
//   modules/subscriptions cache.ts), hence the index.
// - `subscription_shift_starts`: the exactly-once key of `oncall.shift_started` (one row per
//   schedule, person and start), inserted in the transaction that queues the deliveries.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('incident_subscriptions')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    // JSON: ["incident.created", ...]
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret', 'text')
    .addColumn('description', 'text')
    .addColumn('disabled_at', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('incident_subscriptions_org_idx').on('incident_subscriptions').columns(['org_id', 'livemode', 'id']).execute();

  await db.schema
    .createTable('subscription_shift_starts')
    .addColumn('schedule_id', d.idType, (c) => c.notNull().references('oncall_schedules.id').onDelete('cascade'))
    .addColumn('user_id', d.idType, (c) => c.notNull())
    .addColumn('shift_start', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('subscription_shift_starts_pk', ['schedule_id', 'user_id', 'shift_start'])
    .execute();
}
