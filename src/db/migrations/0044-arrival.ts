import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Field dispatch by position, part 1 (issue #38): the nearest responders as a paging target, and
// arrival and departure from the assignee's live position.
// - `paging_pages.distance_m`, `paging_notifications.distance_m`: how far the person paged by a
//   `nearest` target was from the incident when the level fired (metres, rounded); null otherwise.
//   The notification keeps it so its text can say it ("1.2 km from you") when it is sent.
// - `incidents.arrival_radius_m` (default 150): within it, the assignee is on scene. It is shown on
//   the incident, so it joins the list's view and SQLite's list version trigger is made again
//   watching it (list-cache.test.ts checks the watched columns against the view's).
// - `incident_presence`: one row per (incident, user) whose position decided something, its state
//   `inside` or `outside`. A transition is claimed by one conditional update (or the insert of the
//   row, under its primary key), so `on_scene` or `departed` is recorded once across instances.
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
  'arrival_radius_m',
];

export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('paging_pages').addColumn('distance_m', 'integer').execute();
  await db.schema.alterTable('paging_notifications').addColumn('distance_m', 'integer').execute();
  await db.schema.alterTable('incidents').addColumn('arrival_radius_m', 'integer', (c) => c.notNull().defaultTo(150)).execute();

  await db.schema
    .createTable('incident_presence')
    .addColumn('incident_id', d.idType, (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('incident_presence_pk', ['incident_id', 'user_id'])
    .execute();

  if (d.name === 'sqlite') {
    const bump = sql.raw(`insert into incident_list_versions (org_id, livemode, version) values (new.org_id, new.livemode, 1)
      on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1`);
    await sql`drop trigger if exists incidents_list_version_update`.execute(db);
    await sql`create trigger incidents_list_version_update after update of ${sql.raw(LISTED_COLUMNS.join(', '))} on incidents begin ${bump}; end`.execute(db);
  }
}
