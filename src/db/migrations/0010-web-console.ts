import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// The dispatcher's incident list (issue 20): filter by source and sort by SLA due within the
// caller's orgs and mode, by index. And the event type's meeting place (an address or a video
// link), shown on the booking page, in the emails and in the invitation.
export async function up(db: Kysely<unknown>, _d: MigrationDialect): Promise<void> {
  await db.schema.createIndex('incidents_source_idx').on('incidents').columns(['org_id', 'livemode', 'source', 'id']).execute();
  await db.schema.createIndex('incidents_sla_due_list_idx').on('incidents').columns(['org_id', 'livemode', 'sla_due_at', 'id']).execute();
  await db.schema.alterTable('event_types').addColumn('location', 'text').execute();
}
