// The public surface of modules/metrics: other modules import only this file (docs/architecture.md, "Dependency rules").
export { metricsRoutes } from './metrics.routes.js';
export { metricsOf } from './metrics.js';
