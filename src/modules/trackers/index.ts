// The public surface of modules/trackers: other modules import only this file (docs/architecture.md, "Dependency rules").
export { trackersRoutes } from './trackers.routes.js';
