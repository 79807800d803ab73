import type { Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// The visitor's language on a booking (issue 20): a BCP 47 tag from the booking body or the
// request's Accept-Language, so the emails to the visitor use their language for text and dates.
// Null for bookings made before, and when the request named none: those emails stay in English.
export async function up(db: Kysely<unknown>, _d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('bookings').addColumn('language', 'text').execute();
}
