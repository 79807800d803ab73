// The public surface of modules/orgs: other modules import only this file (docs/architecture.md, "Dependency rules").
export { type OrgAccess, actorScope, atLeast, membershipBegan, membershipsOf, orgAccess, orgLimits, streamAudience, targetOrg, targetOrgWrite } from './access.js';
export { proveEmail } from './email-proof.js';
export { invitesRoutes } from './invites.routes.js';
export { type MemberRow, findMember, isMemberLocked, listMembers, membershipSpans, orgIdsOfUsers, orgManagers, recordMembershipsEnded } from './members.repository.js';
export { findOrgName, findPrimaryOrgId, listMemberOrgs } from './orgs.repository.js';
export { orgsRoutes } from './orgs.routes.js';
export { MemberParams, OrgParams, Slug, TeamParams } from './orgs.schemas.js';
export { slugConflict } from './orgs.service.js';
export { PLAN_LIMITS, assertRoomFor, isLockedAt, withLocks } from './plans.js';
export { RETENTION_KINDS } from './retention-settings.js';
export { listTeamMembers, listTeams } from './teams.repository.js';
export { teamsRoutes } from './teams.routes.js';
export { teamAccess } from './teams.service.js';
export { findInvite } from './invites.service.js';
export { insertMembership, insertOrg } from './orgs.repository.js';
export { type MemberRemoved } from './members.service.js';
export { effectiveRetention, findRetention, type Retention, type RetentionKind } from './retention-settings.js';
export { RetentionResponse } from './retention-settings.schemas.js';
