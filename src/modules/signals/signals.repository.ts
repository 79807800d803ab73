import type { Kysely } from 'kysely';
import type { DB, SignalsTable, SignalType } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

export type SignalRow = Omit<SignalsTable, 'id'> & { id: number; user_name: string | null };

export async function insertSignal(db: Kysely<DB>, row: Omit<SignalsTable, 'id'>): Promise<number> {
  const r = await db.insertInto('signals').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

/** Persisted signals of the scope, newest first, with their author's name; one more than asked tells `has_more`. */
export async function listSignals(db: Kysely<DB>, scope: Scope, type: Exclude<SignalType, 'beacon'> | undefined, limit: number, offset: number): Promise<SignalRow[]> {
  let q = db
    .selectFrom('signals')
    .leftJoin('users', 'users.id', 'signals.user_id')
    .selectAll('signals')
    .select('users.name as user_name')
    .$call(scoped(scope, 'signals'));
  if (type) q = q.where('signals.type', '=', type);
  return q.orderBy('signals.id', 'desc').limit(limit).offset(offset).execute();
}
