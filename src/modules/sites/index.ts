// The public surface of modules/sites (issue #38): an org's sites (geofences, circles and polygons),
// and the position observer that records devices entering and leaving them (`watchSites`, composed
// by context.ts into `ctx.positions`). Sites sit above signals and dispatch in the dependency layers;
// the subscriptions (above) receive site.enter and site.exit through `ctx.subscriptions.onSite`.
export type { SitesTables, SitesTable, SitePresenceTable, SiteKind } from './sites.tables.js';
export { sitesRoutes } from './sites.routes.js';
export { siteWatch, type SiteWatch, type SiteTransition } from './presence.js';
