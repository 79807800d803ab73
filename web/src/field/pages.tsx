// Pages on /field (docs/paging.md): an incident the responder is paged for arrives as a full-screen
// card (title, priority, place, one big Acknowledge), readable in sunlight. The pages come from
// `GET /v1/auth/me/pages` on load and whenever the incident stream says something changed, and from
// `#incident-N` in the address (a push notification opens `/field#incident-N`). Acknowledge goes
// through the outbox like every incident action (POST /v1/incidents/:id/acknowledge), and the card
// goes. "Not now" folds a page into a strip at the top until it is opened again.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get } from '../lib/api';
import type { Act } from './incidents';
import { onIncidentEvent } from './stream';
import type { MyIncident, MyPage } from './types';

/**
 * One page of `GET /v1/auth/me/pages` (the open, unacknowledged incidents the caller was paged
 * for); `paged_at` is null for an incident opened from the address (`#incident-N`) rather than the list.
 */
type Page = Omit<MyPage, 'paged_at'> & { paged_at: string | null };

const PRIORITY: Record<string, string> = { urgent: 'Urgent', high: 'High', normal: 'Normal', low: 'Low' };
const OPEN = (i: { status: string }) => i.status === 'open' || i.status === 'in_progress';

/** The incident named by `#incident-N`, or null. */
export function hashIncident(hash: string): number | null {
  const m = /^#incident-(\d{1,10})$/.exec(hash);
  return m ? Number(m[1]) : null;
}

const time = (iso: string) => new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' }).format(new Date(iso));

/**
 * The pages, newest first: the list of the API, plus an incident opened from the address while it
 * is open and unacknowledged. Reloaded on every incident event that may change it (at most every 300 ms).
 */
function usePages(userId: number): { pages: Page[]; drop: (id: number) => void; error: string | null; pending: boolean } {
  const [listed, setListed] = useState<Page[]>([]);
  // The incident of the address (`#incident-N`), shown first; `pending` until it is known (so the
  // card does not show another page first and then switch).
  const [hash, setHash] = useState<{ id: number; pending: boolean } | null>(() => {
    const id = hashIncident(location.hash);
    return id === null ? null : { id, pending: true };
  });
  const [fromHash, setFromHash] = useState<Page | null>(null);
  const [gone, setGone] = useState<Set<number>>(new Set());
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      get<{ data: MyPage[] }>('/v1/auth/me/pages')
        .then((r) => {
          if (stopped) return;
          setListed(r.data);
          // Acknowledged here and already gone from the server's list: nothing to remember.
          setGone((g) => (g.size === 0 ? g : new Set([...g].filter((id) => r.data.some((p) => p.incident_id === id)))));
          setError(null);
        })
        .catch(() => !stopped && setError('Could not check for pages; showing the last ones.'));
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void load(), 300);
    };
    const openFromHash = () => {
      const id = hashIncident(location.hash);
      if (id === null) return setHash(null);
      setHash({ id, pending: true });
      get<MyIncident>(`/v1/incidents/${id}`)
        .then((i) => {
          if (stopped) return;
          if (!OPEN(i) || i.acknowledged_at) return setFromHash(null);
          setFromHash({ incident_id: i.Id, org_id: i.org_id, title: i.title, priority: i.priority, location_name: i.location_name, paged_at: null, level: null });
        })
        .catch((err: unknown) => !stopped && setError(err instanceof ApiError && err.status === 404 ? `Incident ${id} was not found.` : 'Could not load the incident of this link.'))
        .finally(() => !stopped && setHash((h) => (h?.id === id ? { id, pending: false } : h)));
    };
    void load();
    openFromHash();
    window.addEventListener('hashchange', openFromHash);
    const off = onIncidentEvent((e) => {
      if (e.type === 'open' || e.type === 'incident.created' || e.type === 'incident.assigned') return soon();
      if (e.type === 'incident.updated') {
        const i = e.payload as MyIncident | undefined;
        // An incident opened from the address that someone acknowledged or resolved meanwhile.
        if (i) setFromHash((p) => (p && p.incident_id === i.Id && (i.acknowledged_at || !OPEN(i)) ? null : p));
        return soon();
      }
      if (e.type === 'incident.timeline') {
        const t = (e.payload as { type?: string } | undefined)?.type;
        if (t === 'paged' || t === 'acknowledged' || t === 'status_changed') soon();
      }
    });
    return () => {
      stopped = true;
      clearTimeout(timer);
      window.removeEventListener('hashchange', openFromHash);
      off();
    };
  }, [userId]);
  const all = fromHash && !listed.some((p) => p.incident_id === fromHash.incident_id) ? [fromHash, ...listed] : listed;
  // The address's incident first: the person tapped that notification.
  const target = hash?.id;
  const ordered = target === undefined ? all : [...all.filter((p) => p.incident_id === target), ...all.filter((p) => p.incident_id !== target)];
  return {
    pages: ordered.filter((p) => !gone.has(p.incident_id)),
    drop: (id) => {
      setGone((g) => new Set([...g, id]));
      if (fromHash?.incident_id === id) setFromHash(null);
      if (hash?.id === id) setHash(null);
    },
    error,
    // Already in the list, the address's page needs no wait.
    pending: !!hash?.pending && !all.some((p) => p.incident_id === hash.id),
  };
}

function PageCard({ page, count, act, onDone, onLater }: { page: Page; count: number; act: Act; onDone: () => void; onLater: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ack = useRef<HTMLButtonElement>(null);
  useEffect(() => ack.current?.focus(), [page.incident_id]);
  // The page behind does not scroll while the card covers it.
  useEffect(() => {
    document.documentElement.classList.add('paged');
    return () => document.documentElement.classList.remove('paged');
  }, []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onLater();
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onLater]);
  const acknowledge = async () => {
    setBusy(true);
    setError(null);
    const err = await act({ method: 'POST', path: `/v1/incidents/${page.incident_id}/acknowledge`, label: 'Acknowledge' });
    setBusy(false);
    if (err) return setError(err);
    onDone();
  };
  return (
    <div class="page-overlay">
      <section class={`page-card priority-${page.priority}`} role="alertdialog" aria-modal="true" aria-labelledby="page-title" aria-describedby="page-what" data-testid="page-card" data-incident-id={page.incident_id}>
        <p class="page-band" id="page-what">
          <span>You are paged</span>
          <span class="page-priority" data-testid="page-priority">
            {PRIORITY[page.priority] ?? page.priority}
          </span>
        </p>
        <div class="page-body">
          <h2 id="page-title" data-testid="page-title">
            {page.title}
          </h2>
          <p class={`page-place${page.location_name ? '' : ' none'}`} data-testid="page-place">
            {page.location_name ?? 'No place given'}
          </p>
          <p class="page-meta">
            Incident #{page.incident_id}
            {page.level !== null ? ` · level ${page.level}` : ''}
            {page.paged_at ? ` · paged at ${time(page.paged_at)}` : ''}
            {count > 1 ? ` · ${count - 1} more waiting` : ''}
          </p>
          {error && (
            <p class="field-error" role="alert">
              {error}
            </p>
          )}
        </div>
        <div class="page-actions">
          <button type="button" ref={ack} class="page-ack" disabled={busy} onClick={() => void acknowledge()} data-testid="page-ack">
            {busy ? 'Acknowledging…' : 'Acknowledge'}
          </button>
          <button type="button" class="secondary page-later" onClick={onLater} data-testid="page-later">
            Not now
          </button>
        </div>
      </section>
    </div>
  );
}

/** The card of the newest page not put off, and a strip for the ones put off with "Not now". */
export function Pages({ userId, act }: { userId: number; act: Act }) {
  const { pages, drop, error, pending } = usePages(userId);
  const [later, setLater] = useState<Set<number>>(new Set());
  // A page opened from the address again is shown again.
  useEffect(() => {
    const show = () => {
      const id = hashIncident(location.hash);
      if (id !== null) setLater((l) => new Set([...l].filter((x) => x !== id)));
    };
    window.addEventListener('hashchange', show);
    return () => window.removeEventListener('hashchange', show);
  }, []);
  const shown = pages.find((p) => !later.has(p.incident_id));
  const waiting = pages.filter((p) => later.has(p.incident_id));
  const done = (id: number) => {
    drop(id);
    if (hashIncident(location.hash) === id) history.replaceState(null, '', location.pathname + location.search);
  };
  return (
    <>
      {error && <p class="muted small">{error}</p>}
      {waiting.length > 0 && (
        <ul class="page-strip" data-testid="page-strip" aria-label="Pages put off">
          {waiting.map((p) => (
            <li key={p.incident_id}>
              <span>
                <strong>Paged:</strong> {p.title}
              </span>
              <button type="button" class="small-button" onClick={() => setLater((l) => new Set([...l].filter((x) => x !== p.incident_id)))} data-testid="page-open">
                Open
              </button>
            </li>
          ))}
        </ul>
      )}
      {shown && !pending && (
        <PageCard
          key={shown.incident_id}
          page={shown}
          count={pages.length - waiting.length}
          act={act}
          onDone={() => done(shown.incident_id)}
          onLater={() => setLater((l) => new Set([...l, shown.incident_id]))}
        />
      )}
    </>
  );
}
