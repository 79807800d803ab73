// The public surface of modules/retention: other modules import only this file (docs/architecture.md, "Dependency rules").
export { retentionRoutes } from './retention.routes.js';
export { removeUploads, sweepRetention } from './retention.service.js';
export type { RetentionTables, RetentionSettingsTable } from './retention.tables.js';
