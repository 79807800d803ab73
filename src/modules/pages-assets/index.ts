// The public surface of modules/pages-assets: other modules import only this file (docs/architecture.md, "Dependency rules").
export { notFoundPage } from './not-found-page.js';
export { pagesAssetsRoutes } from './pages-assets.routes.js';
export { PAGES_CSS_PATH } from './pages-css.js';
