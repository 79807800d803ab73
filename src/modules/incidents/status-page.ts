import { escapeHtml } from '../../lib/html.js';
import { PAGES_CSS_PATH } from '../pages-assets/pages-css.js';
import type { StatusPage } from './incidents.schemas.js';


const LABEL: Record<StatusPage['status'], string> = { open: 'Open', in_progress: 'In progress', resolved: 'Resolved', closed: 'Closed' };

/** The public status page: server-rendered, no script, no inline style (CSP), every value escaped. */
export function renderStatusPage(page: StatusPage): string {
  const replies = page.replies.length
    ? page.replies
        .map(
          (r) =>
            `<li><p>${escapeHtml(r.body).replace(/\n/g, '<br>')}</p><small>${r.author_name ? `${escapeHtml(r.author_name)} · ` : ''}<time datetime="${escapeHtml(r.created_at)}">${escapeHtml(r.created_at.slice(0, 16).replace('T', ' '))} UTC</time></small></li>`,
        )
        .join('')
    : '<li class="empty">No updates yet.</li>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><meta http-equiv="refresh" content="60">
<title>${escapeHtml(page.title)} · Status</title>
<link rel="stylesheet" href="${PAGES_CSS_PATH}"></head>
<body class="status"><main><span class="status-badge ${page.status}">${LABEL[page.status]}</span><h1>${escapeHtml(page.title)}</h1>
<h2>Updates</h2><ul>${replies}</ul><footer>Reported ${escapeHtml(page.created_at.slice(0, 10))} · last update ${escapeHtml(page.updated_at.slice(0, 16).replace('T', ' '))} UTC · powered by Muster</footer></main></body></html>`;
}
