// The public surface of modules/privacy: other modules import only this file (docs/architecture.md, "Dependency rules").
export { privacyRoutes } from './privacy.routes.js';
export { deleteMemberlessOrgs } from './privacy.service.js';
