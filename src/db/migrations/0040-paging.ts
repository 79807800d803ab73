import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Paging, part A (issue #36, modules/paging).
// - `escalation_policies`: org configuration shared by both modes (no livemode), the levels as a
//   JSON document (each level's delay and targets); written whole by every PATCH.
// - Which policy: `integrations.escalation_policy_id`, the org default in `dispatch_settings`,
//   and on an incident its id with a copy of the policy (`escalation_snapshot`, JSON), so later
//   edits of the policy never change a running escalation. The two references that keep a policy
//   from being deleted are foreign keys (no action): a DELETE racing an integration's PATCH fails
//   instead of leaving a dangling id. The incident keeps its copy, so it has no foreign key.
// - `paging_notification_rules`: a person's own rules, one row per user (no row: the defaults).
// - `users.phone_verified_at`: when the current number was proven by its SMS code. Numbers stored
//   before this migration are taken as proven: they already receive alerts, and nothing changes
//   for existing installations until their users change their number.
// - `paging_notifications`: one row per channel a person is to be reached on for an incident,
//   due at page time + the rule's delay; the scheduler claims each with a conditional update.
//   Action tokens name a row of it. `paging_call_events`: Twilio's status callbacks of calls.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('escalation_policies')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('repeat', 'integer', (c) => c.notNull())
    // JSON: [{delay_minutes, targets: [{type, id}]}]
    .addColumn('levels', 'text', (c) => c.notNull())
    .addColumn('created_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('escalation_policies_org_idx').on('escalation_policies').columns(['org_id', 'id']).execute();

  await db.schema.alterTable('integrations').addColumn('escalation_policy_id', d.idType, (c) => c.references('escalation_policies.id')).execute();
  await db.schema.alterTable('dispatch_settings').addColumn('default_escalation_policy_id', d.idType, (c) => c.references('escalation_policies.id')).execute();
  await db.schema.alterTable('incidents').addColumn('escalation_policy_id', d.idType).execute();
  await db.schema.alterTable('incidents').addColumn('escalation_snapshot', 'text').execute();

  await db.schema.alterTable('users').addColumn('phone_verified_at', 'text').execute();
  await sql`update users set phone_verified_at = updated_at where phone is not null`.execute(db);

  await db.schema
    .createTable('paging_notification_rules')
    .addColumn('user_id', d.idType, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    // JSON: {high: [{channel, delay_minutes}], low: [...]}
    .addColumn('rules', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('paging_notifications')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('incident_id', d.idType, (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('org_id', d.idType, (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    // pending -> sent | skipped | failed | cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create index paging_notifications_due_idx on paging_notifications (due_at) where status = 'pending'`.execute(db);
  await db.schema.createIndex('paging_notifications_incident_idx').on('paging_notifications').columns(['incident_id', 'status']).execute();
  await db.schema.createIndex('paging_notifications_user_idx').on('paging_notifications').columns(['user_id', 'id']).execute();

  await db.schema
    .createTable('paging_call_events')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('notification_id', d.idType, (c) => c.notNull().references('paging_notifications.id').onDelete('cascade'))
    .addColumn('call_sid', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('paging_call_events_notification_idx').on('paging_call_events').columns(['notification_id']).execute();
}
