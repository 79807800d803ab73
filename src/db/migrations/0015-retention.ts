import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Operations (issue #22): each org's retention settings, the indexes the retention sweeper and a
// person's export and deletion read by, and the mark that shows a deleted author as "Deleted user".
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  // Days per kind. NULL: the instance default (RETENTION_*_DAYS); 0: keep forever (the API's null).
  await db.schema
    .createTable('retention_settings')
    .addColumn('org_id', d.idType, (c) => c.primaryKey().references('orgs.id').onDelete('cascade'))
    .addColumn('signals_days', 'integer')
    .addColumn('audit_days', 'integer')
    .addColumn('uploads_days', 'integer')
    .addColumn('closed_incidents_days', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('signals_age_idx').on('signals').columns(['org_id', 'created_at']).execute();
  await db.schema.createIndex('signals_user_idx').on('signals').columns(['user_id', 'org_id']).execute();
  await db.schema.createIndex('audit_log_age_idx').on('audit_log').columns(['org_id', 'created_at']).execute();
  await db.schema.createIndex('replies_author_idx').on('replies').column('author_id').execute();
  // Set when the author's account was deleted (author_id is then null, as for a customer's emailed reply).
  await db.schema.alterTable('replies').addColumn('author_deleted', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
