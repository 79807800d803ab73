import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Dispatch: acknowledgement and escalation state of each incident, and each org's
// acknowledgement timeouts (no row = the defaults; a null column = that priority never escalates).
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('incidents').addColumn('acknowledged_at', 'text').execute();
  await db.schema
    .alterTable('incidents')
    .addColumn('acknowledged_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await db.schema.alterTable('incidents').addColumn('escalation_level', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // When the next escalation step is due (null: none is); the sweeper reads only due rows.
  await db.schema.alterTable('incidents').addColumn('escalate_at', 'text').execute();
  await db.schema.createIndex('incidents_escalate_idx').on('incidents').column('escalate_at').execute();
  // `assignee_id=me` lists and the responders' open-assignment counts.
  await db.schema.createIndex('incidents_assignee_idx').on('incidents').columns(['assignee_id', 'org_id', 'livemode', 'status']).execute();

  // The responder search: an org's live devices in a latitude band (the bounding box's first range).
  await db.schema.createIndex('beacon_states_geo_idx').on('beacon_states').columns(['org_id', 'livemode', 'active', 'lat']).execute();

  await db.schema
    .createTable('dispatch_settings')
    .addColumn('org_id', d.idType, (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
    .addColumn('ack_urgent_minutes', 'integer')
    .addColumn('ack_high_minutes', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
