import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// The incident list's cache (issue 19, src/modules/incidents/list-cache.ts) keeps serialised pages
// while the org's incidents have not changed. What changed is told by a version per org and mode,
// bumped by triggers on `incidents` in the writing transaction itself, so every write (the API,
// the sweepers, retention, cascades, another instance, a hand-run statement) moves it; a reader
// reads the version before the rows and keeps a page only under the version it read first.
//
// SQLite: AFTER triggers per row (one writer at a time). PostgreSQL: a deferred constraint trigger,
// which bumps at COMMIT, after the transaction's last statement, so the version row is locked only
// for the commit itself and never before a row lock the transaction takes later (no lock-order
// inversion with `select ... for update` of incidents). No foreign key to orgs: a deleted org's
// incidents go by cascade and their trigger still bumps its (now unused) row.
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
    await sql`create trigger incidents_list_version_insert after insert on incidents begin ${bump('new')}; end`.execute(db);
    await sql`create trigger incidents_list_version_delete after delete on incidents begin ${bump('old')}; end`.execute(db);
    await sql`create trigger incidents_list_version_update after update on incidents begin ${bump('new')}; end`.execute(db);
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
