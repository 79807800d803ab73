import { escapeHtml } from '../../lib/html.js';
import { PAGES_CSS_PATH } from './pages-css.js';

/**
 * The styled page of a public address that names nothing (an unknown booking page, status page or
 * management link): the shared stylesheet, no script, nothing of the address repeated.
 */
export function notFoundPage(eyebrow: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Not found · Muster</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml"><link rel="stylesheet" href="${PAGES_CSS_PATH}"></head>
<body class="decision"><main data-testid="not-found"><div class="mark no">?</div><p class="eyebrow">${escapeHtml(eyebrow)}</p><h1>Page not found</h1><p class="hint">${escapeHtml(message)}</p></main><footer>Muster</footer></body></html>`;
}
