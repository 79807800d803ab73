// Small building blocks shared by the dashboard views: data loading, errors, badges, copy buttons.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, messageOf } from '../lib/api';
import { ago, formatDateTime } from '../lib/format';
import type { StreamState } from './sse';
import type { Incident } from './types';
import { highlightFields, plainMessage, summaryOf } from './field-errors';

export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  setData: (f: (d: T | undefined) => T | undefined) => void;
}

/** Loads `fn` when `deps` change; `reload()` loads again without clearing what is shown. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): Async<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setLoading(true);
    fn().then(
      (d) => {
        if (mine !== seq.current) return;
        setDataState(d);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (mine !== seq.current) return;
        setError(e);
        setLoading(false);
      },
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const setData = useCallback((f: (d: T | undefined) => T | undefined) => setDataState(f), []);
  return { data, error, loading, reload, setData };
}

/** The form-level message and the per-field messages of a failed request. */
export function errorsOf(err: unknown): { message: string; fields: Record<string, string> } | null {
  if (!err) return null;
  const fields: Record<string, string> = {};
  if (err instanceof ApiError && err.status === 422) {
    for (const d of err.body.details ?? []) {
      if (!d.field || !d.message) continue;
      const field = d.field.replace(/^\//, '').replace(/\//g, '.');
      fields[field] = plainMessage(field, d.message);
    }
    if (Object.keys(fields).length > 0) return { message: summaryOf(fields), fields };
  }
  return { message: messageOf(err), fields };
}

export function ErrorAlert({ error, title }: { error: unknown; title?: string }) {
  const e = errorsOf(error);
  const ref = useRef<HTMLDivElement>(null);
  // Highlights the named fields of the surrounding form (issue 20) and focuses the first.
  useEffect(() => {
    const form = ref.current?.closest('form');
    if (form) highlightFields(form, e?.fields ?? {}, true);
  }, [error]);
  if (!e) return <span ref={ref} hidden />;
  return (
    <div class="alert error" role="alert" ref={ref} data-testid="form-error">
      {title ? <strong>{title} </strong> : null}
      {e.message}
    </div>
  );
}

export function FieldError({ error, name }: { error: unknown; name: string }) {
  const msg = errorsOf(error)?.fields[name];
  return msg ? <div class="field-error" id={`err-${name}`}>{msg}</div> : null;
}

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> {label}…
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <strong>{title}</strong>
      {children ? <div class="muted">{children}</div> : null}
    </div>
  );
}

export function PageHeader({ title, sub, children }: { title: string; sub?: ComponentChildren; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <div>
        <h1>{title}</h1>
        {sub ? <p class="muted">{sub}</p> : null}
      </div>
      {children ? <div class="page-actions">{children}</div> : null}
    </header>
  );
}

export function LiveBadge({ state }: { state: StreamState }) {
  const label = state === 'live' ? 'Live' : state === 'connecting' ? 'Connecting' : 'Reconnecting';
  return (
    <span class={`live live-${state}`} data-testid="live-state" title="Live updates">
      <span class="dot" aria-hidden="true" /> {label}
    </span>
  );
}

export const STATUS_LABEL: Record<string, string> = { open: 'Open', in_progress: 'In progress', resolved: 'Resolved', closed: 'Closed' };
export const PRIORITY_LABEL: Record<string, string> = { low: 'Low', normal: 'Normal', high: 'High', urgent: 'Urgent' };
/** Where an incident came from (issue 20: one made in the dashboard says so). */
export const SOURCE_LABEL: Record<string, string> = { dashboard: 'Dashboard', api: 'API', email: 'Email', webhook: 'Webhook', alert: 'Field alert' };
/** The tool an integration's incident came through (issue 33: not "Field alert"). */
export const TOOL_LABEL: Record<string, string> = { events_api: 'Events API', alertmanager: 'Alertmanager', grafana: 'Grafana', email: 'Email', heartbeat: 'Heartbeat' };

/** "Alertmanager · Prometheus prod" for an integration's incident, else the source in words. */
export function sourceLabel(i: { source: string; integration?: { name: string; tool: string | null } | null }): string {
  if (i.integration) return `${(i.integration.tool && TOOL_LABEL[i.integration.tool]) ?? 'Integration'} · ${i.integration.name}`;
  return SOURCE_LABEL[i.source] ?? i.source;
}

export function StatusBadge({ status }: { status: string }) {
  const cls = status === 'open' ? 'brand' : status === 'in_progress' ? 'warn' : status === 'resolved' ? 'ok' : '';
  return <span class={`badge ${cls}`}>{STATUS_LABEL[status] ?? status}</span>;
}

export function PriorityBadge({ priority }: { priority: string }) {
  const cls = priority === 'urgent' ? 'danger' : priority === 'high' ? 'warn' : '';
  return <span class={`badge prio-${priority} ${cls}`}>{PRIORITY_LABEL[priority] ?? priority}</span>;
}

/** due (ok) / warning / breached / met, from the incident's SLA fields. */
export function SlaBadge({ incident }: { incident: Pick<Incident, 'sla_status' | 'sla_due_at' | 'sla_breached'> }) {
  const due = formatDateTime(incident.sla_due_at);
  const s = incident.sla_status;
  const [cls, text] =
    s === 'breached' ? ['danger', 'SLA breached'] : s === 'warning' ? ['warn', `SLA due ${relative(incident.sla_due_at)}`] : s === 'met' ? ['ok', 'SLA met'] : ['', `SLA due ${relative(incident.sla_due_at)}`];
  return (
    <span class={`badge sla ${cls}`} data-testid="sla-badge" data-sla={s} title={`SLA due ${due}`}>
      {text}
    </span>
  );
}

/** "in 3 h", "in 20 min", or "3 min ago". */
export function relative(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  if (ms < 0) return ago(iso, now);
  const min = Math.round(ms / 60000);
  if (min < 60) return `in ${min} min`;
  const h = Math.round(min / 60);
  if (h < 48) return `in ${h} h`;
  return `on ${formatDateTime(iso)}`;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const ta = document.createElement('textarea');
      ta.value = text;
      document.body.appendChild(ta);
      ta.select();
      document.execCommand('copy');
      ta.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" class="secondary small" onClick={() => void copy()} aria-live="polite">
      {done ? 'Copied' : label}
    </button>
  );
}

/** Previous / next with "Page 2 of 5" (or without a count when the list only says has_more). */
export function Pager({ page, pages, hasMore, onPage }: { page: number; pages?: number; hasMore?: boolean; onPage: (p: number) => void }) {
  const next = pages !== undefined ? page < pages : !!hasMore;
  if (page <= 1 && !next) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span class="muted">{pages !== undefined ? `Page ${page} of ${pages}` : `Page ${page}`}</span>
      <button type="button" class="secondary" disabled={!next} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
