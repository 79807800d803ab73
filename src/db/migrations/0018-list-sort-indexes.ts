import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// sort=priority of the incident list walks an index within the caller's org and mode and stops at
// the page (issue 19), instead of sorting every incident of the org: an index on the priority's
// rank (urgent first), newest first within, written as list-filters.ts writes the rank (the
// planners match the expression by its text). sort=sla_due already walks incidents_sla_due_list_idx
// (0010) and sorts only incidents with equal due times by id; that index is left alone, as
// migrations may run in any order (0010 may come after this one).
export async function up(db: Kysely<unknown>, _d: MigrationDialect): Promise<void> {
  await sql`create index incidents_priority_rank_idx on incidents
    (org_id, livemode, (case priority when 'urgent' then 0 when 'high' then 1 when 'normal' then 2 else 3 end), id desc)`.execute(db);
}
