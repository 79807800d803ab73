// The public surface of modules/devices: other modules import only this file (docs/architecture.md, "Dependency rules").
export { DeviceCache, type CachedDevice } from './device-cache.js';
export { trackerId } from './device-urls.js';
export { type DeviceRow, touchDevice } from './devices.repository.js';
export { devicesRoutes } from './devices.routes.js';
export { listDevices, TOKEN_PATTERN } from './devices.service.js';
export { Device } from './devices.schemas.js';
export type { DevicesTables, DevicesTable } from './devices.tables.js';
