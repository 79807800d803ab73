// The public surface of modules/integrations: other modules import only this file (docs/architecture.md, "Dependency rules").
export { checkHeartbeats, HEARTBEAT_TICK_MS } from './heartbeats.js';
export { ingestRoutes } from './ingest.routes.js';
export { type IntegrationRow, adminOrgIds, findByEmailToken, findIntegrationById } from './integrations.repository.js';
export { integrationsRoutes } from './integrations.routes.js';
export { trigger } from './lifecycle.js';
export type { IntegrationsTables, IntegrationsTable } from './integrations.tables.js';
