// The public surface of modules/system: other modules import only this file (docs/architecture.md, "Dependency rules").
export { healthRoutes } from './health.routes.js';
