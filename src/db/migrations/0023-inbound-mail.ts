import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Inbound mail (issues 31 and 32):
// - A received message goes with its incident: `incident_id` and `reply_to_incident_id` become
//   ON DELETE CASCADE (they were SET NULL, so the raw message outlived the incident it opened).
// - What the message says about its sender, read from its headers at DATA time: `sender` (From:),
//   `answer_to` (Reply-To:, else From:), `subject`, and whether From: was authenticated
//   (`authenticated`, with `auth`, a one-line summary of why or why not).
// - `size` (bytes as received, so a listing never reads `raw`) and `raw_removed_at`: when
//   retention emptied `raw` (the row stays while its incident does).
// - Status `ignored` (automatic mail kept for the record, never answered) needs no DDL: it is text.
const COLUMNS = [
  'id',
  'org_id',
  'livemode',
  'integration_id',
  'reply_to_incident_id',
  'mail_from',
  'rcpt_to',
  'message_id',
  'raw',
  'status',
  'attempts',
  'error',
  'incident_id',
  'created_at',
  'processed_at',
];

const newColumns = <T extends string, C extends string>(t: CreateTableBuilder<T, C>) =>
  t
    .addColumn('sender', 'text')
    .addColumn('answer_to', 'text')
    .addColumn('subject', 'text')
    .addColumn('authenticated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('auth', 'text')
    .addColumn('size', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('raw_removed_at', 'text');

/** Bytes of a base64 text: three for every four characters, less the padding. */
const decodedLength = sql.raw(`length(raw) * 3 / 4 - (case when raw like '%==' then 2 when raw like '%=' then 1 else 0 end)`);

export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  if (d.name === 'postgres') {
    for (const column of ['incident_id', 'reply_to_incident_id']) {
      // The name PostgreSQL gave the inline reference of 0016 (`<table>_<column>_fkey`), looked up rather than assumed.
      const found = await sql<{ conname: string }>`
        select c.conname from pg_constraint c
        join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
        where c.conrelid = 'inbound_emails'::regclass and c.contype = 'f' and a.attname = ${column}`.execute(db);
      for (const { conname } of found.rows) await sql`alter table inbound_emails drop constraint ${sql.id(conname)}`.execute(db);
      await sql`alter table inbound_emails add foreign key (${sql.id(column)}) references incidents (id) on delete cascade`.execute(db);
    }
    await db.schema
      .alterTable('inbound_emails')
      .addColumn('sender', 'text')
      .addColumn('answer_to', 'text')
      .addColumn('subject', 'text')
      .addColumn('authenticated', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('auth', 'text')
      .addColumn('size', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('raw_removed_at', 'text')
      .execute();
    await sql`update inbound_emails set size = ${decodedLength}`.execute(db);
  } else {
    // SQLite cannot change a foreign key in place: the table is rebuilt (nothing refers to it).
    await newColumns(
      db.schema
        .createTable('inbound_emails_new')
        .addColumn('id', d.idType, (c) => d.identity(c))
        .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('integration_id', d.idType, (c) => c.references('integrations.id').onDelete('set null'))
        .addColumn('reply_to_incident_id', d.idType, (c) => c.references('incidents.id').onDelete('cascade'))
        .addColumn('mail_from', 'text', (c) => c.notNull())
        .addColumn('rcpt_to', 'text', (c) => c.notNull())
        .addColumn('message_id', 'text')
        .addColumn('raw', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('incident_id', d.idType, (c) => c.references('incidents.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('processed_at', 'text'),
    ).execute();
    const list = sql.raw(COLUMNS.join(', '));
    await sql`insert into inbound_emails_new (${list}, size) select ${list}, ${decodedLength} from inbound_emails`.execute(db);
    await db.schema.dropTable('inbound_emails').execute();
    await db.schema.alterTable('inbound_emails_new').renameTo('inbound_emails').execute();
    await db.schema.createIndex('inbound_emails_status_idx').on('inbound_emails').columns(['status', 'id']).execute();
    await db.schema.createIndex('inbound_emails_incident_idx').on('inbound_emails').columns(['incident_id', 'id']).execute();
  }
  // The cascade from a deleted incident, the admin's listing, retention by age, and a person's export.
  await db.schema.createIndex('inbound_emails_reply_to_idx').on('inbound_emails').columns(['reply_to_incident_id', 'id']).execute();
  await db.schema.createIndex('inbound_emails_scope_idx').on('inbound_emails').columns(['org_id', 'livemode', 'id']).execute();
  await db.schema.createIndex('inbound_emails_age_idx').on('inbound_emails').columns(['org_id', 'created_at']).execute();
  await db.schema.createIndex('inbound_emails_sender_idx').on('inbound_emails').columns(['sender']).execute();
}
