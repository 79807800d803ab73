// The public surface of modules/api-keys: other modules import only this file (docs/architecture.md, "Dependency rules").
export { findActiveKey, unrevokedKeyIds } from './api-keys.repository.js';
export { apiKeysRoutes } from './api-keys.routes.js';
export type { ApiKeysTables, ApiKeysTable } from './api-keys.tables.js';
