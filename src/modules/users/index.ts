// The public surface of modules/users: other modules import only this file (docs/architecture.md, "Dependency rules").
export { type Memberships, type OrgWrite, credentialCache } from './credential-cache.js';
export { cachedUser, userRowChanged } from './user-cache.js';
export { type UserRow, findUserByEmail, findUserById, updateUser } from './users.repository.js';
export { usersRoutes } from './users.routes.js';
export { MeResponse, UpdateMeBody } from './users.schemas.js';
export { getMe, hasUsers, heldMe, normalizeEmail, toMe, updateMe } from './users.service.js';
export { defaultPlan } from './default-plan.js';
export { findUserBySlug, insertUser } from './users.repository.js';
export { AdminUpdateUserBody, AdminUser, CreateUserBody, PublicProfile, SlugParams, UserResponse } from './users.schemas.js';
export { requireAdmin, toAdminUser, toUser } from './users.service.js';
export type { UsersTables, UsersTable } from './users.tables.js';
