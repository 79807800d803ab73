// The public surface of modules/dispatch: other modules import only this file (docs/architecture.md, "Dependency rules").
export { dispatchRoutes } from './dispatch.routes.js';
export { boundingBox, haversineM } from './geo.js';
export { findHandoffMinutes } from './settings.repository.js';
export type { DispatchTables, DispatchSettingsTable } from './dispatch.tables.js';
export { rankDevices } from './responders.js';
export { arrivalWatch, type ArrivalWatch } from './arrival.js';
export type { IncidentPresenceTable } from './dispatch.tables.js';
