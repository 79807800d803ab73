// The public surface of modules/reports (issues #38 and #39): other modules and app.ts import only this file.
export { incidentReportRoutes } from './incident-report.routes.js';
export { oncallReportRoutes } from './oncall-report.routes.js';
export { reportsRoutes } from './reports.routes.js';
export { ReportStore } from './stored-results.js';
export type { ReportsTables, ReportResultsTable } from './reports.tables.js';
