// The public surface of modules/streams: other modules import only this file (docs/architecture.md, "Dependency rules").
export { streamAccessCheck } from './access-check.js';
export { BeaconPosition, CATALOG, IncidentStreamEvent, SignalStreamEvent, type EventCatalog } from './catalog.js';
export { streamsRoutes } from './streams.routes.js';
