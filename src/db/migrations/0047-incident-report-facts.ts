import { sql, type Kysely } from 'kysely';

// Reports (issue #39): what the incident report needs of each incident, kept on its row by the
// incident's owner as its timeline is written (modules/incidents report-facts.repository.ts), so a
// report over a year reads one table, not every incident's timeline:
// - `first_acknowledged_at`: the first `acknowledged` event (the row's `acknowledged_at` is cleared
//   when the incident is reassigned, and a reopened one may be acknowledged again);
// - `escalated_at`: the first `escalated` event (a policy's level past the first, a step of the
//   default escalation, or an escalation by hand);
// - `reopened_count`: how many times it went from resolved or closed back to open or in progress.
// Existing incidents get theirs from their timelines. None of these is in the list's view, so the
// list's version trigger (migrations 0019, 0041) does not watch them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('incidents').addColumn('first_acknowledged_at', 'text').execute();
  await db.schema.alterTable('incidents').addColumn('escalated_at', 'text').execute();
  await db.schema.alterTable('incidents').addColumn('reopened_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await backfill(db);
}

/** Each incident's facts from its timeline (exported for the test that checks it against the ones kept live). */
export async function backfill(db: Kysely<unknown>): Promise<void> {
  await sql`
    update incidents set
      first_acknowledged_at = (select min(e.created_at) from incident_events e where e.incident_id = incidents.id and e.type = 'acknowledged'),
      escalated_at = (select min(e.created_at) from incident_events e where e.incident_id = incidents.id and e.type = 'escalated'),
      reopened_count = (
        select count(*) from incident_events e
        where e.incident_id = incidents.id and e.type = 'status_changed'
          and (e.data like '%"from":"resolved"%' or e.data like '%"from":"closed"%')
          and (e.data like '%"to":"open"%' or e.data like '%"to":"in_progress"%')
      )
    where exists (select 1 from incident_events e where e.incident_id = incidents.id and e.type in ('acknowledged', 'escalated', 'status_changed'))
  `.execute(db);
}
