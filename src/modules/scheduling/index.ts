// The public surface of modules/scheduling: other modules import only this file (docs/architecture.md, "Dependency rules").
export { bookingLinksRoutes } from './booking-links.routes.js';
export type { BookingRow } from './bookings.repository.js';
export { bookingsRoutes } from './bookings.routes.js';
export type { EventTypeRow } from './event-types.repository.js';
export { eventTypesRoutes } from './event-types.routes.js';
export { publicPageExists } from './public-page-exists.js';
export { publicPagesRoutes } from './public-pages.routes.js';
export { calendarSender } from './calendar-sender.js';
export type { SchedulingTables, LocationType, BookingStatus, EventTypesTable, BookingsTable } from './scheduling.tables.js';
