import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Idempotency keys (Stripe's protocol): one row per (scope, key). A request claims its key with an
// in-flight row before it runs; the effect's own transaction turns the row into the stored response.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('id', d.idType, (c) => d.identity(c))
    // Who may replay it: `user:<id>:<mode>` for credentials, `ip:<address>` for public routes.
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    // SHA-256 of method, path and the canonical JSON body: the same key with another request is 422.
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    // 'pending' while the first request runs, 'done' once its response is stored.
    .addColumn('state', 'text', (c) => c.notNull())
    // The claim of the request that runs it; a takeover after the lock timeout changes it.
    .addColumn('lock_token', 'text')
    .addColumn('locked_at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idempotency_keys_scope_key_idx').on('idempotency_keys').columns(['scope', 'key']).unique().execute();
  await db.schema.createIndex('idempotency_keys_created_idx').on('idempotency_keys').column('created_at').execute();
}
