import type { Kysely } from 'kysely';
import type { DB, SignalsTable, SignalType } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

/** A signal with its author's name, its meta as a value (stored as JSON text). */
export type SignalRow = Omit<SignalsTable, 'id' | 'meta'> & { id: number; user_name: string | null; meta: Record<string, unknown> };

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
  const rows = await q.orderBy('signals.id', 'desc').limit(limit).offset(offset).execute();
  return rows.map((r) => ({ ...r, meta: JSON.parse(r.meta) as Record<string, unknown> }));
}
