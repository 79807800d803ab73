import { sql, type SqlBool, type WhereInterface } from 'kysely';
import { flag, type Mode } from './schema.js';

/** Which tenant data a query may touch: the orgs of the caller and the mode of the credential. */
export interface Scope {
  orgIds: readonly number[];
  mode: Mode;
}

/**
 * The one place tenant queries are scoped. Adds `table.org_id IN (orgIds) AND table.livemode = mode`
 * to a select, update or delete: `db.selectFrom('incidents').$call(scoped(scope, 'incidents'))`.
 * An empty org list matches nothing.
 */
export function scoped(scope: Scope, table: string) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- works for any table that has org_id and livemode
  return <QB extends WhereInterface<any, any>>(qb: QB): QB => {
    if (scope.orgIds.length === 0) return qb.where(sql<SqlBool>`1 = 0`) as QB;
    return qb
      .where(sql.ref(`${table}.org_id`), 'in', [...scope.orgIds])
      .where(sql.ref(`${table}.livemode`), '=', flag(scope.mode === 'live')) as QB;
  };
}
