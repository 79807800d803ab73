// The public surface of modules/auth: other modules import only this file (docs/architecture.md, "Dependency rules").
export { accountRoutes, guardOf } from './account.routes.js';
export { accountsRoutes } from './accounts.routes.js';
export { authRoutes } from './auth.routes.js';
export { heldActor, resolveActor, resolveCredential } from './credentials.js';
export { issueCode, redeemCode } from './email-codes.js';
export type { Guard } from './guard.js';
export { clearSessionCookie, sessionTokenOf } from './session-cookie.js';
export { liveSessionIds } from './sessions.repository.js';
export { endUserSessions } from './sessions.js';
export type { AuthTables, SessionsTable, MagicCodesTable, CodePurpose } from './auth.tables.js';
