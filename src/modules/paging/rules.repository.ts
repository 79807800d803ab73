import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { NotificationRules } from './rules.js';

/** A person's own rules as a value (parsed from their JSON column here); undefined: never set. */
export async function findRules(db: Kysely<DB>, userId: number): Promise<NotificationRules | undefined> {
  const row = await db.selectFrom('paging_notification_rules').select('rules').where('user_id', '=', userId).executeTakeFirst();
  return row ? (JSON.parse(row.rules) as NotificationRules) : undefined;
}

/** Writes both lists whole. */
export async function saveRules(db: Kysely<DB>, userId: number, rules: NotificationRules, nowIso: string): Promise<void> {
  const text = JSON.stringify(rules);
  await db
    .insertInto('paging_notification_rules')
    .values({ user_id: userId, rules: text, updated_at: nowIso })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ rules: text, updated_at: nowIso }))
    .execute();
}
