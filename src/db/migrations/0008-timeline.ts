import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// One timeline per incident: every change, reply, linked signal, escalation and repeated alert,
// written in the same transaction as its cause.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('incident_events')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('incident_id', d.idType, (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor_id', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('incident_events_incident_idx').on('incident_events').columns(['incident_id', 'id']).execute();
}
