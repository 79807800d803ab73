import type { Kysely } from 'kysely';
import type { DB, Mode } from '../../db/schema.js';
import { flag } from '../../db/schema.js';

/** Names of the org's members among `userIds` (a removed member's beacon is not a responder). */
export async function memberNames(db: Kysely<DB>, orgId: number, userIds: number[]): Promise<Map<number, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.name'])
    .where('m.org_id', '=', orgId)
    .where('m.user_id', 'in', userIds)
    .execute();
  return new Map(rows.map((r) => [r.user_id, r.name]));
}

/** Open and in-progress incidents assigned to each of `userIds` in the org and mode (one grouped read). */
export async function openAssignments(db: Kysely<DB>, orgId: number, mode: Mode, userIds: number[]): Promise<Map<number, number>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('incidents')
    .select(['assignee_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('assignee_id', 'in', userIds)
    .where('org_id', '=', orgId)
    .where('livemode', '=', flag(mode === 'live'))
    .where('status', 'in', ['open', 'in_progress'])
    .groupBy('assignee_id')
    .execute();
  return new Map(rows.map((r) => [r.assignee_id!, Number(r.n)]));
}
