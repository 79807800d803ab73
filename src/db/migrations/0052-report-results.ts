import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Reports (issue #39, modules/reports/stored-results.ts): the answers of report questions that take
// long to compute (a year of a million incidents: seconds), stored with the instant they are of and
// the version of the data they were computed from, and leased by the one instance recomputing them.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('report_results')
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('question', 'text', (c) => c.notNull())
    .addColumn('data_version', 'text', (c) => c.notNull())
    .addColumn('as_of', 'text', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('compute_ms', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_until', 'text')
    .addColumn('lease_token', 'text')
    .addPrimaryKeyConstraint('report_results_pk', ['org_id', 'livemode', 'kind', 'question'])
    .execute();
}
