import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EscalationPoliciesTable } from './paging.tables.js';
import type { Level } from './policies.schemas.js';

type Stored = Selectable<EscalationPoliciesTable>;
/** A policy as a value: its levels parsed from their JSON column (here, nowhere else). */
export type PolicyRow = Omit<Stored, 'levels'> & { levels: Level[] };

const valueOf = (r: Stored): PolicyRow => ({ ...r, levels: JSON.parse(r.levels) as Level[] });

export async function insertPolicy(db: Kysely<DB>, row: Omit<PolicyRow, 'id'>): Promise<PolicyRow> {
  return valueOf(await db.insertInto('escalation_policies').values({ ...row, levels: JSON.stringify(row.levels) }).returningAll().executeTakeFirstOrThrow());
}

export async function listPolicies(db: Kysely<DB>, orgId: number): Promise<PolicyRow[]> {
  return (await db.selectFrom('escalation_policies').selectAll().where('org_id', '=', orgId).orderBy('id').execute()).map(valueOf);
}

/** A policy of this org; undefined for an unknown one or another org's. */
export async function findPolicy(db: Kysely<DB>, orgId: number, id: number): Promise<PolicyRow | undefined> {
  const r = await db.selectFrom('escalation_policies').selectAll().where('id', '=', id).where('org_id', '=', orgId).executeTakeFirst();
  return r && valueOf(r);
}

export async function updatePolicy(db: Kysely<DB>, id: number, set: Partial<Pick<PolicyRow, 'name' | 'repeat' | 'levels' | 'updated_at'>>): Promise<PolicyRow> {
  const { levels, ...rest } = set;
  const values = levels === undefined ? rest : { ...rest, levels: JSON.stringify(levels) };
  return valueOf(await db.updateTable('escalation_policies').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow());
}

export async function deletePolicy(db: Kysely<DB>, id: number): Promise<void> {
  await db.deleteFrom('escalation_policies').where('id', '=', id).execute();
}

/** What keeps a policy from being deleted: the active integrations using it, and whether it is its org's default. */
export async function policyUses(db: Kysely<DB>, id: number): Promise<{ integrations: { id: number; name: string }[]; orgDefault: boolean }> {
  const [integrations, settings] = await Promise.all([
    db.selectFrom('integrations').select(['id', 'name']).where('escalation_policy_id', '=', id).where('revoked_at', 'is', null).orderBy('id').execute(),
    db.selectFrom('dispatch_settings').select('org_id').where('default_escalation_policy_id', '=', id).executeTakeFirst(),
  ]);
  return { integrations, orgDefault: settings !== undefined };
}

/** Revoked integrations keep their row: their reference is let go so the policy can be deleted. */
export async function releaseRevokedIntegrations(db: Kysely<DB>, id: number): Promise<void> {
  await db.updateTable('integrations').set({ escalation_policy_id: null }).where('escalation_policy_id', '=', id).where('revoked_at', 'is not', null).execute();
}
