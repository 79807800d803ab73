import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Incidents (tickets) and their replies, plus per-filter counters so a list's `total` never
// counts a million rows.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('incidents')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('priority', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('source_ref', 'text')
    .addColumn('lat', 'double precision')
    .addColumn('lng', 'double precision')
    .addColumn('location_name', 'text')
    .addColumn('assignee_id', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('creator_id', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('customer_token', 'text', (c) => c.notNull().unique())
    .addColumn('sla_due_at', 'text', (c) => c.notNull())
    .addColumn('sla_warn_at', 'text', (c) => c.notNull())
    .addColumn('sla_warned_at', 'text')
    .addColumn('sla_breached_at', 'text')
    .addColumn('resolved_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Lists: newest first within the caller's orgs and mode, optionally by status or priority.
  await db.schema.createIndex('incidents_scope_idx').on('incidents').columns(['org_id', 'livemode', 'id']).execute();
  await db.schema.createIndex('incidents_status_idx').on('incidents').columns(['org_id', 'livemode', 'status', 'id']).execute();
  await db.schema.createIndex('incidents_priority_idx').on('incidents').columns(['org_id', 'livemode', 'priority', 'id']).execute();
  // The SLA sweeper's scan.
  await db.schema.createIndex('incidents_sla_warn_idx').on('incidents').columns(['sla_warned_at', 'sla_warn_at']).execute();
  await db.schema.createIndex('incidents_sla_due_idx').on('incidents').columns(['sla_breached_at', 'sla_due_at']).execute();

  await db.schema
    .createTable('incident_counts')
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('priority', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('incident_counts_pk', ['org_id', 'livemode', 'status', 'priority'])
    .execute();

  await db.schema
    .createTable('replies')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('incident_id', d.idType, (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('public', 'integer', (c) => c.notNull())
    .addColumn('author_id', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('replies_incident_idx').on('replies').columns(['incident_id', 'id']).execute();
}
