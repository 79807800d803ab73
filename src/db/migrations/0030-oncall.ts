import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// On-call schedules (issue #35, modules/oncall). Org configuration shared by live and test mode,
// so no livemode column. Nothing here is ever rewritten to change the past:
// - the layers are kept as versions, each in force from its `effective_from` until the next one's;
// - a deleted schedule keeps its rows (`deleted_at`), its slug free for a new one;
// - a deleted override keeps its row (`deleted_at`): it stops counting from then on;
// - `membership_history` (owned by modules/orgs) keeps the memberships that ended, so a member who
//   left is off every layer and override from the moment they left, and earlier answers stay.
// `oncall_handoff_notices` is the exactly-once key of the handoff notices: one row per shift,
// inserted in the transaction that queues the notice. `calendar_objects` (modules/calendars, write
// side) are the events Muster keeps in users' CalDAV calendars, each with what it should hold now.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('oncall_schedules')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    // Part of the signed feed link; bumping it revokes the old link.
    .addColumn('feed_version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await sql`create unique index oncall_schedules_org_slug_uq on oncall_schedules (org_id, slug) where deleted_at is null`.execute(db);
  await db.schema.createIndex('oncall_schedules_org_idx').on('oncall_schedules').columns(['org_id', 'id']).execute();

  await db.schema
    .createTable('oncall_layer_versions')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('schedule_id', d.idType, (c) => c.notNull().references('oncall_schedules.id').onDelete('cascade'))
    .addColumn('effective_from', 'text', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    // JSON: the layers in order of precedence (modules/oncall/resolver.ts LayerSpec).
    .addColumn('layers', 'text', (c) => c.notNull())
    .addColumn('created_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oncall_layer_versions_schedule_idx').on('oncall_layer_versions').columns(['schedule_id', 'effective_from']).execute();

  await db.schema
    .createTable('oncall_overrides')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('schedule_id', d.idType, (c) => c.notNull().references('oncall_schedules.id').onDelete('cascade'))
    // No foreign key: a deleted account's past overrides stay in the history (its name does not).
    .addColumn('user_id', d.idType, (c) => c.notNull())
    .addColumn('start_time', 'text', (c) => c.notNull())
    .addColumn('end_time', 'text', (c) => c.notNull())
    .addColumn('created_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('oncall_overrides_schedule_idx').on('oncall_overrides').columns(['schedule_id', 'end_time']).execute();

  await db.schema
    .createTable('membership_history')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('user_id', d.idType, (c) => c.notNull())
    .addColumn('joined_at', 'text', (c) => c.notNull())
    .addColumn('left_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('membership_history_org_idx').on('membership_history').columns(['org_id', 'user_id']).execute();

  await db.schema
    .createTable('oncall_handoff_notices')
    .addColumn('schedule_id', d.idType, (c) => c.notNull().references('oncall_schedules.id').onDelete('cascade'))
    .addColumn('user_id', d.idType, (c) => c.notNull())
    .addColumn('shift_start', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('oncall_handoff_notices_pk', ['schedule_id', 'user_id', 'shift_start'])
    .execute();

  // Beside the acknowledgement timeouts: minutes before a shift that its person is told; null: never.
  await db.schema.alterTable('dispatch_settings').addColumn('handoff_notice_minutes', 'integer', (c) => c.defaultTo(15)).execute();

  await db.schema
    .createTable('calendar_objects')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('connection_id', d.idType, (c) => c.notNull().references('calendar_connections.id').onDelete('cascade'))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    // Which feature owns the event (`oncall`): each one replaces only its own.
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('ics', 'text', (c) => c.notNull())
    // 1 while the event should be in the calendar; 0 once it should be deleted.
    .addColumn('wanted', 'integer', (c) => c.notNull())
    // The event's end: a sync of a window leaves the events that ended before it alone.
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('calendar_objects_connection_uid_unique', ['connection_id', 'uid'])
    .execute();
  await db.schema.createIndex('calendar_objects_user_idx').on('calendar_objects').columns(['user_id', 'source']).execute();
}
