import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Which integration opened an incident, and through which tool (issue 33): a monitoring incident
// showed as "Field alert" with no name. `integration_name` is the integration's name when the
// incident opened (as a mail keeps its sender's name), so lists and events need no join; the tool
// is `events_api`, `alertmanager`, `grafana` or `email`. Null for every other incident. Incidents
// opened before this migration by an integration get its id from their `created` timeline event.
//
// The columns are part of the list's view (incidents.repository.ts VIEW_COLUMNS), so SQLite's list
// version trigger of migration 0019 is made again watching them too (list-cache.test.ts checks the
// watched columns against the view's). The partial index serves `GET /v1/tickets?source=integration`
// and costs nothing to the other creations.
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
];

export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('incidents').addColumn('integration_id', d.idType).execute();
  await db.schema.alterTable('incidents').addColumn('integration_name', 'text').execute();
  await db.schema.alterTable('incidents').addColumn('integration_tool', 'text').execute();
  // Before the updates: on PostgreSQL they queue the list version's deferred trigger events, and a
  // table with pending trigger events cannot be indexed in the same transaction.
  await sql`create index incidents_integration_idx on incidents (org_id, livemode, id) where integration_id is not null`.execute(db);
  // Before this migration the tool was not recorded: email for an email incident, else none known.
  await sql`update incidents set
      integration_id = (select min(cast(${sql.raw(d.name === 'sqlite' ? "json_extract(e.data, '$.integration_id')" : "(e.data::jsonb ->> 'integration_id')")} as ${sql.raw(d.idType)}))
        from incident_events e where e.incident_id = incidents.id and e.type = 'created')
    where creator_id is null and source in ('alert', 'email')`.execute(db);
  await sql`update incidents set
      integration_name = (select i.name from integrations i where i.id = incidents.integration_id),
      integration_tool = case when source = 'email' then 'email' else null end
    where integration_id is not null`.execute(db);
  // Fire those events now, so that later migrations of the same run may change the table.
  if (d.name === 'postgres') await sql`set constraints incidents_list_version immediate; set constraints incidents_list_version deferred`.execute(db);

  if (d.name === 'sqlite') {
    const bump = sql.raw(`insert into incident_list_versions (org_id, livemode, version) values (new.org_id, new.livemode, 1)
      on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1`);
    await sql`drop trigger if exists incidents_list_version_update`.execute(db);
    await sql`create trigger incidents_list_version_update after update of ${sql.raw(LISTED_COLUMNS.join(', '))} on incidents begin ${bump}; end`.execute(db);
  }
}
