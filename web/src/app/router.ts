// Client routing under /app/ with the History API: one current location, links intercepted.
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();
const emit = () => listeners.forEach((f) => f());

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (!to.startsWith('/app')) {
    location.assign(to);
    return;
  }
  if (to === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  emit();
  if (!opts.replace) window.scrollTo(0, 0);
}

/** Changes the query string of the current page without a history entry per keystroke. */
export function setQuery(params: Record<string, string | number | undefined | null>): void {
  const p = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') p.delete(k);
    else p.set(k, String(v));
  }
  const s = p.toString();
  navigate(location.pathname + (s ? `?${s}` : ''), { replace: true });
}

export interface Loc {
  path: string;
  query: URLSearchParams;
}

const current = (): Loc => ({ path: location.pathname.replace(/\/+$/, '') || '/', query: new URLSearchParams(location.search) });

export function useLocation(): Loc {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const f = () => setLoc(current());
    listeners.add(f);
    return () => void listeners.delete(f);
  }, []);
  return loc;
}

/** Matches `/app/incidents/:id` against a path; answers the parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split('/');
  const b = path.split('/');
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const p = a[i]!;
    const v = b[i]!;
    if (p.startsWith(':')) params[p.slice(1)] = decodeURIComponent(v);
    else if (p !== v) return null;
  }
  return params;
}

/** Same-origin links to /app/... are handled here instead of reloading the page. */
export function interceptLinks(): void {
  window.addEventListener('popstate', emit);
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const href = a.getAttribute('href');
    if (!href || !href.startsWith('/app')) return;
    e.preventDefault();
    navigate(href);
  });
}

/** `?next=` when it is a path on this site (never another origin), else the fallback. */
export function safeNext(raw: string | null, fallback: string): string {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return fallback;
  try {
    const u = new URL(raw, location.origin);
    if (u.origin !== location.origin) return fallback;
    if (u.pathname === '/app' || u.pathname === '/app/' || u.pathname.startsWith('/app/login')) return fallback;
    return u.pathname + u.search + u.hash;
  } catch {
    return fallback;
  }
}
