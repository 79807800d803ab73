import { sql, type Expression, type SqlBool } from 'kysely';
import { flag, type Mode } from './schema.js';

/** Which tenant data a query may touch: the orgs of the caller and the mode of the credential. */
export interface Scope {
  orgIds: readonly number[];
  mode: Mode;
}

/** Any Kysely select, update or delete builder: each has `where(expression)` returning itself. */
interface Filterable<QB> {
  where(expression: Expression<SqlBool>): QB;
}

/** `table.org_id IN (orgIds) AND table.livemode = mode`; an empty org list matches nothing. */
export function scopeCondition(scope: Scope, table: string): Expression<SqlBool> {
  if (scope.orgIds.length === 0) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`${sql.ref(`${table}.org_id`)} in (${sql.join([...scope.orgIds])}) and ${sql.ref(`${table}.livemode`)} = ${flag(scope.mode === 'live')}`;
}

/**
 * The one place tenant queries are scoped. Use it on every select, update or delete of a tenant
 * table: `db.selectFrom('incidents').$call(scoped(scope, 'incidents'))`.
 */
export function scoped(scope: Scope, table: string) {
  return <QB extends Filterable<QB>>(qb: QB): QB => qb.where(scopeCondition(scope, table));
}
