import { escapeHtml } from '../../lib/html.js';
import type { StatusPage } from './incidents.schemas.js';


const LABEL: Record<StatusPage['status'], string> = { open: 'Open', in_progress: 'In progress', resolved: 'Resolved', closed: 'Closed' };

/** The public status page: server-rendered, no script, every value escaped. */
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
<style>body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2433}main{max-width:40rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.5rem;margin:.3rem 0 1.2rem}h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.06em;color:#5b6475;margin:1.5rem 0 .4rem}.status{display:inline-block;padding:.2rem .7rem;border-radius:1rem;font-weight:600;background:#e3ecff;color:#1849a9}
.status.resolved,.status.closed{background:#dcf5e3;color:#146c2e}ul{list-style:none;padding:0}li{background:#fff;border-radius:.5rem;padding:.8rem 1rem;margin:.6rem 0;box-shadow:0 1px 2px #0001}
li p{margin:0 0 .3rem}small{color:#5b6475}.empty{color:#5b6475}footer{color:#8a91a0;font-size:.85rem;margin-top:2rem}</style></head>
<body><main><span class="status ${page.status}">${LABEL[page.status]}</span><h1>${escapeHtml(page.title)}</h1>
<h2>Updates</h2><ul>${replies}</ul><footer>Reported ${escapeHtml(page.created_at.slice(0, 10))} · last update ${escapeHtml(page.updated_at.slice(0, 16).replace('T', ' '))} UTC · powered by Muster</footer></main></body></html>`;
}
