// /status.js: keeps the server-rendered incident status page (/incidents/status/<token>) current.
// Polls GET /v1/incidents/status/<token> every 15 s (and at once when the tab becomes visible) and
// re-renders the status, the title and the public replies with textContent (never as HTML).
// Without JavaScript the page refreshes itself every minute (<noscript> meta refresh).

interface StatusPage {
  org_name?: string;
  title: string;
  status: 'open' | 'in_progress' | 'resolved' | 'closed';
  created_at: string;
  updated_at: string;
  replies: { body: string; author_name: string | null; created_at: string }[];
  status_changes?: { from: string; to: StatusPage['status']; at: string }[];
}

const LABEL: Record<StatusPage['status'], string> = { open: 'Open', in_progress: 'In progress', resolved: 'Resolved', closed: 'Closed' };
const token = location.pathname.split('/').filter(Boolean).pop() ?? '';
const source = `/v1/incidents/status/${encodeURIComponent(token)}`;
const requested = Number(new URLSearchParams(location.search).get('poll'));
const every = Number.isFinite(requested) && requested >= 2 ? requested * 1000 : 15_000;

const dateTime = (iso: string) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function render(page: StatusPage): void {
  const badge = document.getElementById('status');
  if (badge) {
    badge.textContent = LABEL[page.status] ?? page.status;
    badge.className = `status-badge ${page.status}`;
    badge.setAttribute('data-status', page.status);
  }
  const title = document.getElementById('title');
  if (title) title.textContent = page.title;
  const org = document.getElementById('org');
  if (org && page.org_name !== undefined) org.textContent = page.org_name;
  document.title = `${page.title} · ${page.org_name ?? ''} status`;
  const list = document.getElementById('updates');
  if (list) {
    const changes = (page.status_changes ?? []).map((c) => {
      const li = el('li', undefined, 'status-change');
      li.setAttribute('data-testid', 'status-change');
      const meta = el('small');
      const time = el('time', dateTime(c.at));
      time.dateTime = c.at;
      meta.append(time);
      li.append(el('p', `Status: ${LABEL[c.to] ?? c.to}`), meta);
      return { at: c.at, li };
    });
    const replies = page.replies.map((r) => {
      const li = el('li');
      li.setAttribute('data-testid', 'reply');
      const p = el('p', r.body);
      p.style.whiteSpace = 'pre-line';
      const meta = el('small');
      if (r.author_name) meta.append(`${r.author_name} · `);
      const time = el('time', dateTime(r.created_at));
      time.dateTime = r.created_at;
      meta.append(time);
      li.append(p, meta);
      return { at: r.created_at, li };
    });
    // Oldest first, as the server renders them (ISO times sort as text).
    const items = [...replies, ...changes].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)).map((i) => i.li);
    if (items.length === 0) items.push(el('li', 'No updates yet.', 'empty'));
    list.replaceChildren(...items);
  }
  const footer = document.getElementById('footer');
  if (footer) footer.textContent = `Reported ${dateTime(page.created_at)} · last update ${dateTime(page.updated_at)} · updates appear here automatically · powered by Muster`;
}

function note(text: string | null): void {
  let n = document.getElementById('refresh-note');
  if (!text) {
    n?.remove();
    return;
  }
  if (!n) {
    n = el('p', undefined, 'refresh-note');
    n.id = 'refresh-note';
    n.setAttribute('role', 'status');
    document.getElementById('footer')?.before(n);
  }
  n.textContent = text;
}

let timer: number | undefined;
async function poll(): Promise<void> {
  window.clearTimeout(timer);
  try {
    const res = await fetch(source, { headers: { accept: 'application/json' }, cache: 'no-store' });
    if (res.status === 404) {
      note('This status link is no longer valid.');
      return;
    }
    if (!res.ok) throw new Error(String(res.status));
    render((await res.json()) as StatusPage);
    note(null);
  } catch {
    note('Could not check for updates; trying again shortly.');
  }
  timer = window.setTimeout(() => void poll(), every);
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') void poll();
});
// The server rendered the page just now: render again to show times in the visitor's zone, then poll.
void poll();
