import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// Issue #14: proven email addresses, emailed codes for several purposes, invite links.
export async function up(db: Kysely<unknown>, _d: MigrationDialect): Promise<void> {
  // 0/1 like every flag. Existing accounts start unproven: nothing so far proved an address, and
  // marking them verified would keep any takeover that registration with an invited or admin
  // address already gave. Their owners prove it with a magic code, a reset code or the new link.
  await db.schema.alterTable('users').addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // One table for every emailed six-digit code: 'magic' (sign-in), 'reset' (password), 'verify'
  // (email). Each purpose has its own newest code, so asking for one never retires another.
  await db.schema.alterTable('magic_codes').addColumn('purpose', 'text', (c) => c.notNull().defaultTo('magic')).execute();
  await db.schema.createIndex('magic_codes_purpose_email_idx').on('magic_codes').columns(['email', 'purpose', 'id']).execute();
  // SHA-256 of the secret in the invite's emailed link; a refreshed invite gets a new one.
  await db.schema.alterTable('org_invites').addColumn('token_hash', 'text').execute();
  await db.schema.createIndex('org_invites_token_idx').on('org_invites').column('token_hash').unique().execute();
}
