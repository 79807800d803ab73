// The public surface of modules/calendars: other modules import only this file (docs/architecture.md, "Dependency rules").
export { calendarsRoutes } from './calendars.routes.js';
export { type CalendarObject, syncCalendarObjects, usersWithWriteCalendar } from './objects.js';
export { syncDueCalendars } from './sync.service.js';
export { invitationOf, queueCalendarWrite } from './writes.js';
export { findConnection } from './calendars.repository.js';
export { deleteEvent, putEvent } from './dav.js';
export { isObjectWrite, sendObject, type ObjectWrite } from './objects.js';
export { davOptions } from './sync.service.js';
export { hostEventOf, LOCATION_LABEL, writeError, type CalendarWrite } from './writes.js';
export type { CalendarsTables, CalendarObjectsTable, CalendarKind, CalendarStatus, CalendarConnectionsTable, CalendarBusyTable } from './calendars.tables.js';
