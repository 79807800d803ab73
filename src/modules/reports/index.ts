// The public surface of modules/reports (issue #39): other modules and app.ts import only this file.
export { incidentReportRoutes } from './incident-report.routes.js';
