import type { Kysely, Selectable } from 'kysely';
import type { DB, IdempotencyKeysTable } from '../db/schema.js';

/** A stored Idempotency-Key, its recorded response as a value (stored as JSON text; null before it is recorded). */
export type IdempotencyRow = Omit<Selectable<IdempotencyKeysTable>, 'response_body'> & { response: unknown };

/** The key of a scope, if stored. */
export async function findKey(db: Kysely<DB>, scope: string, key: string): Promise<IdempotencyRow | undefined> {
  const row = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst();
  if (!row) return undefined;
  const { response_body, ...rest } = row;
  return { ...rest, response: response_body === null ? null : (JSON.parse(response_body) as unknown) };
}
