// The public surface of modules/signals: other modules import only this file (docs/architecture.md, "Dependency rules").
export { writeAudit } from './audit.repository.js';
export type { BeaconState, Box } from './beacons.repository.js';
export { sweepSilentBeacons, switchOffMember, turnOff } from './beacons.service.js';
export { signalsRoutes } from './signals.routes.js';
export { DeviceId, Signal } from './signals.schemas.js';
export { type SignalGuard, attachCapture, createSignal, postBeacon } from './signals.service.js';
export { createMemoryBeaconStore } from './beacon-memory.js';
export type { BeaconStore, DevicePosition } from './beacon-store.js';
export { createRedisBeaconStore } from './redis-beacon-store.js';
export type { SignalsTables, SignalType, SignalsTable, BeaconStatesTable, AuditLogTable } from './signals.tables.js';
export { positionPort, type PositionPort, type PositionObserver, type ObservedFix } from './positions.js';
