import { Type, type Static } from '@sinclair/typebox';
import { Email, Nullable, StringEnum } from '../../lib/schemas.js';
import { RetentionPatch } from './retention-settings.schemas.js';

/** 1-40 characters: lower-case letters, digits and inner dashes. */
export const Slug = Type.String({ pattern: '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$', description: 'lower-case letters, digits and dashes, 1-40 characters' });
const Name = Type.String({ maxLength: 100, pattern: '\\S' });
const Description = Type.String({ maxLength: 2000 });
export const RoleSchema = StringEnum(['owner', 'admin', 'member']);
export const RoutingSchema = StringEnum(['round_robin', 'random']);

export const OrgParams = Type.Object({ org_slug: Type.String({ minLength: 1, maxLength: 100 }) });
export const MemberParams = Type.Object({ ...OrgParams.properties, user_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
export const TeamParams = Type.Object({ ...OrgParams.properties, team_slug: Type.String({ minLength: 1, maxLength: 100 }) });
export const TeamMemberParams = Type.Object({ ...TeamParams.properties, user_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

export const CreateOrgBody = Type.Object({
  name: Name,
  slug: Type.Optional(Slug),
  description: Type.Optional(Description),
});
export type CreateOrgBody = Static<typeof CreateOrgBody>;

export const UpdateOrgBody = Type.Object(
  { name: Type.Optional(Name), slug: Type.Optional(Slug), description: Type.Optional(Nullable(Description)), retention: Type.Optional(RetentionPatch) },
  { minProperties: 1 },
);
export type UpdateOrgBody = Static<typeof UpdateOrgBody>;

export const Org = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  role: RoleSchema,
  primary: Type.Boolean({ description: 'used when a request names no org' }),
  personal: Type.Boolean({ description: "the user's own org, made at registration" }),
  locked: Type.Boolean({ description: 'over the plan limit: readable, not writable' }),
  created_at: Type.String(),
}, { title: 'Org', description: 'An organization (unit), as the caller sees it' });
export type Org = Static<typeof Org>;
export const OrgList = Type.Object({ orgs: Type.Array(Org) }, { title: 'OrgList' });

export const Deleted = Type.Object({ id: Type.Integer(), deleted: Type.Boolean() });

export const Member = Type.Object({ user_id: Type.Integer(), email: Type.String(), name: Type.String(), role: RoleSchema }, { title: 'Member', description: 'A member of an org' });
export const Invited = Type.Object({ invited: Type.Boolean(), email: Type.String(), role: RoleSchema }, { title: 'Invitation', description: 'An invite emailed to an address with no (verified) account' });
export const MemberList = Type.Object({
  members: Type.Array(Member),
  invites: Type.Array(Type.Object({ email: Type.String(), role: RoleSchema, created_at: Type.String() }), {
    description: 'pending invites; shown to owners and admins only',
  }),
}, { title: 'MemberList' });
export const AddMemberBody = Type.Object({ email: Email, role: Type.Optional(RoleSchema) });
export const UpdateMemberBody = Type.Object({ role: RoleSchema });
export const Removed = Type.Object({ user_id: Type.Integer(), removed: Type.Boolean() });

export const Team = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  routing: RoutingSchema,
  description: Nullable(Type.String()),
  created_at: Type.String(),
  locked: Type.Boolean(),
}, { title: 'Team', description: 'A team of an org' });
export const TeamList = Type.Object({ teams: Type.Array(Team) }, { title: 'TeamList' });
export const CreateTeamBody = Type.Object({
  name: Name,
  slug: Type.Optional(Slug),
  routing: Type.Optional(RoutingSchema),
  description: Type.Optional(Description),
});
export type CreateTeamBody = Static<typeof CreateTeamBody>;
export const UpdateTeamBody = Type.Object(
  { name: Type.Optional(Name), slug: Type.Optional(Slug), routing: Type.Optional(RoutingSchema), description: Type.Optional(Nullable(Description)) },
  { minProperties: 1 },
);
export type UpdateTeamBody = Static<typeof UpdateTeamBody>;

export const TeamMember = Type.Object({
  user_id: Type.Integer(),
  name: Type.String(),
  active: Type.Boolean({ description: 'inactive members are skipped by routing' }),
  locked: Type.Boolean({ description: 'over the plan limit: kept, but not routed to' }),
}, { title: 'TeamMember', description: 'A member of a team' });
export const TeamMemberList = Type.Object({ members: Type.Array(TeamMember) }, { title: 'TeamMemberList' });
export const CreatedTeam = Type.Object(
  {
    ...Team.properties,
    members: Type.Array(TeamMember, { description: 'the creator, added as an active member when they belong to the org' }),
  },
  { title: 'CreatedTeam', description: 'A new team and its first members' },
);
export const AddTeamMemberBody = Type.Object({ user_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), active: Type.Optional(Type.Boolean()) });
export const UpdateTeamMemberBody = Type.Object({ active: Type.Boolean() });
