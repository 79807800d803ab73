// The public surface of modules/uploads: other modules import only this file (docs/architecture.md, "Dependency rules").
export { uploadsRoutes } from './uploads.routes.js';
export { storeUpload } from './uploads.service.js';
