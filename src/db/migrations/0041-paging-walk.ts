import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Paging, part B (issue #36): the escalation walk.
// - `incidents.escalation_loop`: how many times the policy has run again after its last level
//   (0-based); with `escalation_level` (the level last fired, 0 before the first) and `escalate_at`
//   (when the next level fires) it is the walk's whole state, claimed by one conditional update per
//   step (modules/incidents policy-walk.ts), so a step happens once across instances.
// - The incident's answer now shows the escalation (policy, level, loop, next), so the escalation
//   columns join the list's view and SQLite's list version trigger of migration 0019 is made again
//   watching them (list-cache.test.ts checks the watched columns against the view's).
// - `paging_pages`: one row per person paged for an incident (by a level, or by hand): who may
//   acknowledge it ("anyone paged"), and the pages a person has open (`GET /v1/auth/me/pages`).
const LISTED_COLUMNS = [
  'id',
  'org_id',
  'livemode',
  'title',
  'description',
  'status',
  'priority',
  'source',
  'source_ref',
  'sla_due_at',
  'sla_warn_at',
  'customer_token',
  'lat',
  'lng',
  'location_name',
  'assignee_id',
  'created_at',
  'resolved_at',
  'acknowledged_at',
  'acknowledged_by',
  'integration_id',
  'integration_name',
  'integration_tool',
  'escalation_policy_id',
  'escalation_snapshot',
  'escalation_level',
  'escalation_loop',
  'escalate_at',
];

export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('incidents').addColumn('escalation_loop', 'integer', (c) => c.notNull().defaultTo(0)).execute();

  await db.schema
    .createTable('paging_pages')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('incident_id', d.idType, (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('org_id', d.idType, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    // null: paged by hand (POST .../page)
    .addColumn('level', 'integer')
    .addColumn('loop', 'integer')
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', d.idType)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('paging_pages_incident_idx').on('paging_pages').columns(['incident_id', 'user_id']).execute();
  await db.schema.createIndex('paging_pages_user_idx').on('paging_pages').columns(['user_id', 'id']).execute();

  if (d.name === 'sqlite') {
    const bump = sql.raw(`insert into incident_list_versions (org_id, livemode, version) values (new.org_id, new.livemode, 1)
      on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1`);
    await sql`drop trigger if exists incidents_list_version_update`.execute(db);
    await sql`create trigger incidents_list_version_update after update of ${sql.raw(LISTED_COLUMNS.join(', '))} on incidents begin ${bump}; end`.execute(db);
  }
}
