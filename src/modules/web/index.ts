// The public surface of modules/web: other modules import only this file (docs/architecture.md, "Dependency rules").
export { webConfigRoutes } from './web-config.routes.js';
export { webRoutes } from './web.routes.js';
