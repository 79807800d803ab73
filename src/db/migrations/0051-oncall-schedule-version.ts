import type { Kysely } from 'kysely';

// On-call (issue #40): a version per schedule, moved by every write that changes who is on call in it
// (its row, a new layer version, an override added or ended), in that write's transaction. Each
// instance keeps who is on call now per schedule (modules/oncall/around-memo.ts) under the version it
// read before resolving; the org view and paging read the schedule rows anyway, so a write on any
// instance is seen by every other on its next read, with nothing shared but this column.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oncall_schedules').addColumn('version', 'integer', (c) => c.notNull().defaultTo(1)).execute();
}
