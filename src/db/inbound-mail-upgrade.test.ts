import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { dropTestSchema, testDialect, testSchemaName } from '../../test/helpers.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

// Migration 0023 rebuilds inbound_emails on SQLite (a foreign key cannot change in place) and
// swaps the constraints on PostgreSQL: mail received before the upgrade must come through whole,
// and go with its incident afterwards.
const schema = testDialect === 'postgres' ? testSchemaName('im') : undefined;
const database = openDatabase(
  testDialect === 'postgres' ? { databaseUrl: process.env.TEST_DATABASE_URL, databaseSchema: schema } : { sqliteFile: ':memory:' },
);
after(async () => {
  await database.destroy();
  if (schema) await dropTestSchema(schema);
});

test(`received mail survives migration 0023 and then goes with its incident, on ${testDialect}`, async () => {
  const late = ['0023-inbound-mail', '0024-inbound-mail-retention'];
  await migrateToLatest(database, Object.fromEntries(Object.entries(migrations).filter(([name]) => !late.includes(name))));
  const db = database.db;
  const now = '2026-01-05T12:00:00.000Z';
  await sql`insert into orgs (id, name, slug, created_at, updated_at) values (1, 'Org', 'org', ${now}, ${now})`.execute(db);
  await sql`insert into incidents (id, org_id, livemode, title, status, priority, source, customer_token, sla_due_at, sla_warn_at, created_at, updated_at)
    values (7, 1, 1, 'Leak', 'open', 'normal', 'email', 'tok', ${now}, ${now}, ${now}, ${now})`.execute(db);
  const raw = Buffer.from('From: a@example.org\r\nSubject: Leak\r\n\r\nWater.\r\n').toString('base64');
  for (const [n, incident, replyTo] of [[1, 7, null], [2, 7, 7], [3, null, null]] as const) {
    await sql`insert into inbound_emails (org_id, livemode, reply_to_incident_id, mail_from, rcpt_to, message_id, raw, status, attempts, incident_id, created_at)
      values (1, 1, ${replyTo}, 'a@example.org', 'in-x@in.example', ${`<m${n}@example.org>`}, ${raw}, 'processed', 0, ${incident}, ${now})`.execute(db);
  }

  const { results } = await migrateToLatest(database);
  assert.deepEqual(results?.map((r) => [r.migrationName, r.status]), late.map((name) => [name, 'Success']));
  const rows = await db.selectFrom('inbound_emails').select(['id', 'message_id', 'raw', 'size', 'authenticated', 'sender', 'incident_id']).orderBy('id').execute();
  assert.deepEqual(rows.map((r) => [r.message_id, r.raw === raw, r.size, r.authenticated, r.sender, r.incident_id]), [
    ['<m1@example.org>', true, 46, 0, null, 7],
    ['<m2@example.org>', true, 46, 0, null, 7],
    ['<m3@example.org>', true, 46, 0, null, null],
  ]);
  // Ids go on from where they were.
  const next = await db.insertInto('inbound_emails').values({ org_id: 1, livemode: 1, integration_id: null, reply_to_incident_id: null, mail_from: '', rcpt_to: 'x', message_id: null, raw: '', status: 'ignored', error: null, incident_id: null, created_at: now, processed_at: null, sender: null, answer_to: null, subject: null, auth: null, raw_removed_at: null }).returning('id').executeTakeFirstOrThrow();
  assert.ok(next.id > rows[2]!.id);

  await db.deleteFrom('incidents').where('id', '=', 7).execute();
  assert.deepEqual((await db.selectFrom('inbound_emails').select('id').orderBy('id').execute()).map((r) => r.id), [rows[2]!.id, next.id]);
  await sql`select inbound_emails_days from retention_settings`.execute(db);
});
