import { escapeHtml } from '../../lib/html.js';
import { PAGES_CSS_PATH } from '../pages-assets/index.js';
import type { StatusPage } from './incidents.schemas.js';


const LABEL: Record<StatusPage['status'], string> = { open: 'Open', in_progress: 'In progress', resolved: 'Resolved', closed: 'Closed' };

/** The public status page: server-rendered (every value escaped), kept current by /status.js (polling); no inline script or style (CSP). */
const time = (at: string) => `<time datetime="${escapeHtml(at)}">${escapeHtml(at.slice(0, 16).replace('T', ' '))} UTC</time>`;

/** Public replies and status changes, oldest first (ISO times sort as text). */
function updates(page: StatusPage): string {
  const items = [
    ...page.replies.map((r) => ({ at: r.created_at, html: `<li data-testid="reply"><p>${escapeHtml(r.body).replace(/\n/g, '<br>')}</p><small>${r.author_name ? `${escapeHtml(r.author_name)} · ` : ''}${time(r.created_at)}</small></li>` })),
    ...page.status_changes.map((c) => ({ at: c.at, html: `<li data-testid="status-change" class="status-change"><p>Status: ${LABEL[c.to]}</p><small>${time(c.at)}</small></li>` })),
  ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return items.length ? items.map((i) => i.html).join('') : '<li class="empty">No updates yet.</li>';
}

export function renderStatusPage(page: StatusPage): string {
  const replies = updates(page);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><noscript><meta http-equiv="refresh" content="60"></noscript>
<title>${escapeHtml(page.title)} · ${escapeHtml(page.org_name)} status</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml"><link rel="stylesheet" href="${PAGES_CSS_PATH}"><script type="module" src="/status.js"></script></head>
<body class="status"><main><p class="status-org" id="org" data-testid="status-org">${escapeHtml(page.org_name)}</p><span class="status-badge ${page.status}" id="status" data-status="${page.status}">${LABEL[page.status]}</span><h1 id="title">${escapeHtml(page.title)}</h1>
<h2>Updates</h2><ul id="updates">${replies}</ul><footer id="footer">Reported ${escapeHtml(page.created_at.slice(0, 10))} · last update ${escapeHtml(page.updated_at.slice(0, 16).replace('T', ' '))} UTC · powered by Muster</footer></main></body></html>`;
}
