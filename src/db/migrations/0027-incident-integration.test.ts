import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { dropTestSchema, testDialect, testSchemaName } from '../../../test/helpers.js';
import { openDatabase } from '../database.js';
import { migrateToLatest } from '../migrate.js';
import { migrations } from './index.js';

// 0027 on a database that already has incidents: those an integration opened before it get the
// integration's id and name from their `created` timeline event (the tool only for a mailbox's),
// every other incident stays without an integration.
const schema = testDialect === 'postgres' ? testSchemaName('m27') : undefined;
const database = openDatabase(testDialect === 'postgres' ? { databaseUrl: process.env.TEST_DATABASE_URL, databaseSchema: schema } : { sqliteFile: ':memory:' });
after(async () => {
  await database.destroy();
  if (schema) await dropTestSchema(schema);
});

test(`0027 names the integrations of incidents opened before it, on ${testDialect}`, async () => {
  const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name !== '0027-incident-integration'));
  await migrateToLatest(database, before);
  const db = database.db;
  const now = '2026-11-20T10:00:00.000Z';
  const user = await db
    .insertInto('users')
    .values({ email: 'old@example.com', password_hash: null, name: 'Old', slug: 'old', plan: 'free', timezone: 'UTC', phone: null, is_admin: 1, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  const org = await db.insertInto('orgs').values({ name: 'Old Org', slug: 'old-org', description: null, personal: 0, owner_id: user.id, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
  const integration = await db
    .insertInto('integrations')
    .values({ org_id: org.id, livemode: 1, name: 'Old Prometheus', key_hash: 'h', last4: 'abcd', email_token: 'in-old', created_by: user.id, default_assignee_id: null, priority_map: null, allowed_senders: null, created_at: now, revoked_at: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  const incident = async (title: string, source: 'alert' | 'email' | 'api', creator: number | null, integrationId?: number) => {
    const row = await db
      .insertInto('incidents')
      .values({
        org_id: org.id, livemode: 1, title, description: null, status: 'open', priority: 'normal', source, source_ref: null, lat: null, lng: null, location_name: null,
        assignee_id: null, creator_id: creator, customer_token: `tok-${title}`, sla_due_at: now, sla_warn_at: now, sla_warned_at: null, sla_breached_at: null,
        resolved_at: null, created_at: now, updated_at: now, acknowledged_at: null, acknowledged_by: null, escalate_at: null,
      } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    const data = { title, priority: 'normal', source, ...(integrationId ? { integration_id: integrationId } : {}) };
    await db.insertInto('incident_events').values({ incident_id: row.id, org_id: org.id, livemode: 1, type: 'created', actor_id: creator, data: JSON.stringify(data), created_at: now }).execute();
    return row.id;
  };
  const fromTool = await incident('From the tool', 'alert', null, integration.id);
  const fromMail = await incident('From the mailbox', 'email', null, integration.id);
  const byHand = await incident('By hand', 'api', user.id);

  // A later migration of the same run may still change the table (PostgreSQL runs them in one transaction).
  const probe = { up: async (k: Kysely<unknown>) => void (await sql`create index incidents_probe_idx on incidents (title)`.execute(k)) };
  const { results, error } = await migrateToLatest(database, { ...migrations, '9999-probe': probe });
  assert.equal(error, undefined);
  assert.deepEqual(results?.map((r) => [r.migrationName, r.status]), [['0027-incident-integration', 'Success'], ['9999-probe', 'Success']]);
  const rows = await db.selectFrom('incidents').select(['id', 'integration_id', 'integration_name', 'integration_tool']).orderBy('id').execute();
  assert.deepEqual(
    rows.map((r) => [r.id, r.integration_id === null ? null : Number(r.integration_id), r.integration_name, r.integration_tool]),
    [
      [fromTool, integration.id, 'Old Prometheus', null],
      [fromMail, integration.id, 'Old Prometheus', 'email'],
      [byHand, null, null, null],
    ],
  );
});
