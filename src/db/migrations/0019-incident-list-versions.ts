import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// The incident list's cache (issue 19, src/modules/incidents/list-cache.ts) keeps serialised pages
// while the org's incidents have not changed. What changed is told by a version per org and mode,
// bumped in the writing transaction itself; a reader reads the version before the rows and keeps a
// page only under the version it read first.
//
// PostgreSQL: a deferred constraint trigger on every insert, update and delete, which bumps at
// COMMIT, after the transaction's last statement, so the version row is locked only for the commit
// itself and never before a row lock the transaction takes later (no lock-order inversion with
// `select ... for update` of incidents).
//
// SQLite: a trigger that writes another table makes SQLite keep a statement journal for the
// triggering statement (a copy of every page it changes: the incident's row and its 13 indexes),
// which took an insert from ~13 to ~57 us (bench/trigger-cost.ts, docs/architecture.md). So the two
// hot writes, the insert (creation) and the touch (`updated_at` alone: alert repeats, replies), bump
// in the code (incidents.repository.ts `listChanged`, SQLite only); triggers take every other update
// of a column a list shows or filters on (the code's own, the SET NULL of a deleted
// user) and every delete (retention, the cascade of a deleted org). Another connection's commits
// (a statement run by hand) are seen through `PRAGMA data_version` (repository `listVersion`).
// The columns below are the list's (VIEW_COLUMNS) but `updated_at`; list-cache.test.ts checks it.
//
// No foreign key to orgs: a deleted org's incidents go by cascade and their trigger still bumps its
// (now unused) row.
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
];

export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('incident_list_versions')
    .addColumn('org_id', d.idType, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('version', d.idType, (c) => c.notNull())
    .addPrimaryKeyConstraint('incident_list_versions_pk', ['org_id', 'livemode'])
    .execute();
  await sql`insert into incident_list_versions (org_id, livemode, version) select distinct org_id, livemode, 1 from incidents`.execute(db);

  const bump = (row: 'new' | 'old') =>
    sql.raw(`insert into incident_list_versions (org_id, livemode, version) values (${row}.org_id, ${row}.livemode, 1)
      on conflict (org_id, livemode) do update set version = incident_list_versions.version + 1`);
  if (d.name === 'sqlite') {
    await sql`create trigger incidents_list_version_delete after delete on incidents begin ${bump('old')}; end`.execute(db);
    await sql`create trigger incidents_list_version_update after update of ${sql.raw(LISTED_COLUMNS.join(', '))} on incidents begin ${bump('new')}; end`.execute(db);
    await sql`create trigger incidents_list_version_move after update of org_id, livemode on incidents
      when old.org_id <> new.org_id or old.livemode <> new.livemode begin ${bump('old')}; end`.execute(db);
    return;
  }
  await sql`create function incidents_list_version() returns trigger language plpgsql as $$
    begin
      if tg_op <> 'INSERT' then ${bump('old')}; end if;
      if tg_op = 'INSERT' or (tg_op = 'UPDATE' and (new.org_id <> old.org_id or new.livemode <> old.livemode)) then ${bump('new')}; end if;
      return null;
    end $$`.execute(db);
  await sql`create constraint trigger incidents_list_version after insert or update or delete on incidents
    deferrable initially deferred for each row execute function incidents_list_version()`.execute(db);
}
