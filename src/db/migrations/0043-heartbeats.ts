import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Heartbeats, maintenance windows and the integration event log (issue #37, modules/integrations).
// - `integration_heartbeats`: one row per integration of type `heartbeat`. A ping is one update of
//   its row (`last_ping_at`, `due_at`); the checker claims a miss with a conditional update from
//   `up` to `down` on the `due_at` it read, in the transaction that opens the incident, so a miss
//   opens one incident across instances. Indexed on (status, due_at): the checker reads only the
//   ones due.
// - The checker's last run (ticks of the heartbeat job) is kept in `settings`
//   (`heartbeats:last_check`): after a gap longer than a heartbeat's interval, it gets a fresh one.
// - `integration_events`: what each integration received and what came of it (the event log);
//   the retention sweep deletes rows older than 7 days, and each integration keeps its last 100.
// - `maintenance_windows`: per org and mode; `integration_ids` JSON (null: all the org's).
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('integration_heartbeats')
    .addColumn('integration_id', d.idType, (c) => c.primaryKey().references('integrations.id').onDelete('cascade'))
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('grace_seconds', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_ping_at', 'text')
    .addColumn('due_at', 'text')
    .addColumn('incident_id', d.idType, (c) => c.references('incidents.id').onDelete('set null'))
    .addColumn('down_at', 'text')
    .execute();
  await db.schema.createIndex('integration_heartbeats_due_idx').on('integration_heartbeats').columns(['status', 'due_at']).execute();

  await db.schema
    .createTable('integration_events')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('integration_id', d.idType, (c) => c.notNull().references('integrations.id').onDelete('cascade'))
    .addColumn('org_id', d.idType, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('incident_id', d.idType, (c) => c.references('incidents.id').onDelete('set null'))
    .addColumn('results', 'text')
    .addColumn('body', 'text')
    .addColumn('body_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('integration_events_integration_idx').on('integration_events').columns(['integration_id', 'id']).execute();
  await db.schema.createIndex('integration_events_created_idx').on('integration_events').columns(['created_at']).execute();

  await db.schema
    .createTable('maintenance_windows')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('starts_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('integration_ids', 'text')
    .addColumn('created_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('maintenance_windows_org_idx').on('maintenance_windows').columns(['org_id', 'livemode', 'ends_at']).execute();
}
