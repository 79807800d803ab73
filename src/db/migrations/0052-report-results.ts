import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// The columns whose update moves an org's incident version on SQLite: 0044's (the list's), and the
// three a report reads that 0047 added (first acknowledgement, first escalation, reopen count), which
// are also written alone (modules/incidents, report-facts.repository.ts). PostgreSQL's trigger moves
// it on every update already. A stored answer holds while the version stays (stored-results.ts).
const VERSIONED_COLUMNS = [
  'id', 'org_id', 'livemode', 'title', 'description', 'status', 'priority', 'source', 'source_ref', 'sla_due_at', 'sla_warn_at',
  'customer_token', 'lat', 'lng', 'location_name', 'assignee_id', 'created_at', 'resolved_at', 'acknowledged_at', 'acknowledged_by',
  'integration_id', 'integration_name', 'integration_tool', 'escalation_policy_id', 'escalation_snapshot', 'escalation_level',
  'escalation_loop', 'escalate_at', 'arrival_radius_m',
  'first_acknowledged_at', 'escalated_at', 'reopened_count',
];

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

  if (d.name === 'sqlite') {
    const bump = sql.raw(`insert into incident_list_versions (org_id, livemode, version) values (new.org_id, new.livemode, 1)
      on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1`);
    await sql`drop trigger if exists incidents_list_version_update`.execute(db);
    await sql`create trigger incidents_list_version_update after update of ${sql.raw(VERSIONED_COLUMNS.join(', '))} on incidents begin ${bump}; end`.execute(db);
  }
}
