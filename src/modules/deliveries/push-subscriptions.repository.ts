import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/** Which of these users have at least one browser registered for Web Push. */
export async function usersWithPush(db: Kysely<DB>, userIds: readonly number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const rows = await db.selectFrom('push_subscriptions').select('user_id').distinct().where('user_id', 'in', userIds).execute();
  return new Set(rows.map((r) => r.user_id));
}
