// The public surface of modules/reports: other modules import only this file (docs/architecture.md, "Dependency rules").
export { reportsRoutes } from './reports.routes.js';
