import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// The incident list's sorts walk an index within the caller's org and mode and stop at the page
// (issue 19), instead of sorting every incident of the org:
// - sort=priority orders by the priority's rank (urgent first), newest first within: an index on
//   the rank expression, written as list-filters.ts writes it (the planners match it by its text);
// - sort=sla_due orders by sla_due_at, newest first among equal due times: the index of 0010 had
//   `id` ascending, so the tie-break was a sort of its own; it is rebuilt with `id desc`.
export async function up(db: Kysely<unknown>, _d: MigrationDialect): Promise<void> {
  await sql`create index incidents_priority_rank_idx on incidents
    (org_id, livemode, (case priority when 'urgent' then 0 when 'high' then 1 when 'normal' then 2 else 3 end), id desc)`.execute(db);
  await sql`drop index incidents_sla_due_list_idx`.execute(db);
  await sql`create index incidents_sla_due_list_idx on incidents (org_id, livemode, sla_due_at, id desc)`.execute(db);
}
