import type { Generated } from 'kysely';
import type { Flag, Role } from '../../db/schema.js';

// The tables of modules/orgs as stored (src/db/schema.ts composes DB from every module's tables).

export interface OrgsTable {
  id: Generated<number>;
  name: string;
  slug: string;
  description: string | null;
  personal: Flag;
  /** The billing owner: their plan sets the org's limits. */
  owner_id: number | null;
  created_at: string;
  updated_at: string;
}

export type Routing = 'round_robin' | 'random';

export interface TeamsTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  slug: string;
  routing: Routing;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface TeamMembersTable {
  id: Generated<number>;
  team_id: number;
  user_id: number;
  active: Flag;
  created_at: string;
}

export interface OrgInvitesTable {
  id: Generated<number>;
  org_id: number;
  email: string;
  role: Role;
  invited_by: number | null;
  created_at: string;
  accepted_at: string | null;
  /** SHA-256 of the token in the emailed invite link. */
  token_hash: string | null;
}

export interface MembershipsTable {
  org_id: number;
  user_id: number;
  role: Role;
  is_primary: Flag;
  created_at: string;
}

/** A membership that ended (member removed, left, or account deleted), kept for on-call history. */
export interface MembershipHistoryTable {
  id: Generated<number>;
  org_id: number;
  user_id: number;
  joined_at: string;
  left_at: string;
}

export interface OrgsTables {
  orgs: OrgsTable;
  memberships: MembershipsTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  org_invites: OrgInvitesTable;
  membership_history: MembershipHistoryTable;
}
