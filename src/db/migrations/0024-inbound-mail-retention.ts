import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Retention of received mail (issue 31, F8): days an org keeps the raw messages Muster received
// (NULL: the instance default RETENTION_INBOUND_EMAILS_DAYS; 0: forever), as for the other kinds of 0015.
export async function up(db: Kysely<unknown>, _d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('retention_settings').addColumn('inbound_emails_days', 'integer').execute();
}
