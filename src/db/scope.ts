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

/** Which of one user's own records a query may touch (calendar connections, push subscriptions): the user and the credential's mode. */
export interface OwnerScope {
  userId: number;
  mode: Mode;
}

/** `table.user_id = userId AND table.livemode = mode`. */
export function ownerCondition(owner: OwnerScope, table: string): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(`${table}.user_id`)} = ${owner.userId} and ${sql.ref(`${table}.livemode`)} = ${flag(owner.mode === 'live')}`;
}

/**
 * The one place a user's own mode-scoped records are filtered, as `scoped` is for org records: a
 * test key sees and changes only what a test key made (docs/api.md, "Mode scoping of every resource").
 */
export function ownedBy(owner: OwnerScope, table: string) {
  return <QB extends Filterable<QB>>(qb: QB): QB => qb.where(ownerCondition(owner, table));
}
