// The public surface of modules/inbound-email: other modules import only this file (docs/architecture.md, "Dependency rules").
export { inboundEmailRoutes } from './inbound.routes.js';
export { startInboundSmtp } from './smtp-listener.js';
export type { InboundEmailTables, InboundEmailStatus, InboundEmailsTable } from './inbound-email.tables.js';
