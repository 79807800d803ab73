import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Incident sources (issue 16): integrations with a hashed key, the mail received for them, and
// the rule that makes `source_ref` a dedup key: one open or in-progress incident per
// (org, mode, source_ref), enforced by a partial unique index so racing triggers cannot both open one.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('integrations')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('last4', 'text', (c) => c.notNull())
    // The local part of the integration's inbound address (random, lower case: mail systems fold case).
    .addColumn('email_token', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('default_assignee_id', d.idType, (c) => c.references('users.id').onDelete('set null'))
    // JSON {critical, error, warning, info} -> priority; null means the default mapping.
    .addColumn('priority_map', 'text')
    // JSON array of sender domains allowed to open incidents by email; null means anyone.
    .addColumn('allowed_senders', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('integrations_scope_idx').on('integrations').columns(['org_id', 'livemode', 'id']).execute();

  await db.schema
    .createTable('inbound_emails')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('integration_id', d.idType, (c) => c.references('integrations.id').onDelete('set null'))
    // Set for mail to a reply+<token> address: the incident it answers.
    .addColumn('reply_to_incident_id', d.idType, (c) => c.references('incidents.id').onDelete('set null'))
    .addColumn('mail_from', 'text', (c) => c.notNull())
    .addColumn('rcpt_to', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text')
    // The message as received, base64 (portable text in both engines, any bytes).
    .addColumn('raw', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('incident_id', d.idType, (c) => c.references('incidents.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('processed_at', 'text')
    .execute();
  await db.schema.createIndex('inbound_emails_status_idx').on('inbound_emails').columns(['status', 'id']).execute();
  await db.schema.createIndex('inbound_emails_incident_idx').on('inbound_emails').columns(['incident_id', 'id']).execute();

  // Incidents opened twice for one source_ref before this release: the oldest open one keeps the
  // key, later ones get `~<id>` appended, so the unique index can be built (nothing is deleted).
  await sql`
    update incidents set source_ref = source_ref || '~' || cast(id as text)
    where source_ref is not null and status in ('open', 'in_progress')
      and exists (select 1 from incidents o where o.org_id = incidents.org_id and o.livemode = incidents.livemode
        and o.source_ref = incidents.source_ref and o.status in ('open', 'in_progress') and o.id < incidents.id)`.execute(db);
  await sql`create unique index incidents_open_source_ref_uq on incidents (org_id, livemode, source_ref) where status in ('open', 'in_progress')`.execute(db);
  await db.schema.createIndex('incidents_source_ref_idx').on('incidents').columns(['org_id', 'livemode', 'source_ref', 'id']).execute();
}
