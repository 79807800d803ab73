import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Event types (personal or team) and bookings. A booking copies its event type's buffers, so all
// busy time of a set of hosts comes from one query on bookings alone.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  // Instance-wide settings shared by every instance, e.g. the secret that signs booking links.
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('event_types')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('owner_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('team_id', d.idType, (c) => c.references('teams.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('duration_minutes', 'integer', (c) => c.notNull())
    .addColumn('location_type', 'text', (c) => c.notNull())
    .addColumn('requires_confirmation', 'integer', (c) => c.notNull())
    .addColumn('max_advance_days', 'integer', (c) => c.notNull())
    .addColumn('min_notice_hours', 'integer', (c) => c.notNull())
    .addColumn('buffer_before_minutes', 'integer', (c) => c.notNull())
    .addColumn('buffer_after_minutes', 'integer', (c) => c.notNull())
    .addColumn('max_bookings_per_day', 'integer')
    .addColumn('slot_interval_minutes', 'integer')
    .addColumn('availability', 'text', (c) => c.notNull())
    .addColumn('blackout_dates', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // A slug names one event type of a user (personal) or of a team, per mode.
  await db.schema.createIndex('event_types_personal_slug').unique().on('event_types').columns(['owner_id', 'livemode', 'slug']).where(sql.ref('team_id'), 'is', null).execute();
  await db.schema.createIndex('event_types_team_slug').unique().on('event_types').columns(['team_id', 'livemode', 'slug']).where(sql.ref('team_id'), 'is not', null).execute();
  await db.schema.createIndex('event_types_org_idx').on('event_types').columns(['org_id', 'livemode', 'id']).execute();

  await db.schema
    .createTable('bookings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Deleting an event type keeps its bookings (history, and the attendee's links).
    .addColumn('event_type_id', d.idType, (c) => c.references('event_types.id').onDelete('set null'))
    .addColumn('host_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('team_id', d.idType, (c) => c.references('teams.id').onDelete('set null'))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attendee_name', 'text', (c) => c.notNull())
    .addColumn('attendee_email', 'text', (c) => c.notNull())
    .addColumn('start_time', 'text', (c) => c.notNull())
    .addColumn('end_time', 'text', (c) => c.notNull())
    .addColumn('buffer_before_minutes', 'integer', (c) => c.notNull())
    .addColumn('buffer_after_minutes', 'integer', (c) => c.notNull())
    .addColumn('notes', 'text')
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('requires_confirmation', 'integer', (c) => c.notNull())
    .addColumn('cancel_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Busy time of a set of hosts in a window: one range scan per host.
  await db.schema.createIndex('bookings_host_time_idx').on('bookings').columns(['host_id', 'livemode', 'start_time']).execute();
  await db.schema.createIndex('bookings_event_type_idx').on('bookings').columns(['event_type_id', 'start_time']).execute();
  await db.schema.createIndex('bookings_team_idx').on('bookings').columns(['team_id', 'host_id', 'created_at']).execute();
}
