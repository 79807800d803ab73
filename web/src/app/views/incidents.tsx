// Incidents: the list with search, sort, filters, counts per status, bulk status change, live updates, and the new-incident form.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, patch, post, qs, randomId } from '../../lib/api';
import { ago } from '../../lib/format';
import { navigate, setQuery, type Loc } from '../router';
import { orgName, useSession } from '../session';
import { useStream } from '../sse';
import { OrgField, PriorityField } from './incident-fields';
import { MaintenanceBanner } from './integration-extras';
import type { Incident } from '../types';
import { Empty, ErrorAlert, FieldError, LiveBadge, Loading, PageHeader, Pager, PriorityBadge, PRIORITY_LABEL, SlaBadge, sourceLabel, SOURCE_LABEL, STATUS_LABEL, StatusBadge, useAsync } from '../ui';

const LIMIT = 20;

type Counts = Record<'open' | 'in_progress' | 'resolved' | 'closed', number>;

export const SORT_LABEL: Record<string, string> = { newest: 'Newest', priority: 'Priority', sla_due: 'SLA due soonest' };

export function IncidentsView({ loc }: { loc: Loc }) {
  const { orgId, orgs } = useSession();
  const status = loc.query.get('status') ?? '';
  const priority = loc.query.get('priority') ?? '';
  const q = loc.query.get('q') ?? '';
  const sort = loc.query.get('sort') ?? '';
  const assignee = loc.query.get('assignee') ?? '';
  const source = loc.query.get('source') ?? '';
  const page = Math.max(1, Number(loc.query.get('page')) || 1);
  const [creating, setCreating] = useState(loc.query.get('new') === '1');
  const [search, setSearch] = useState(q);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const filtered = !!(status || priority || q || assignee || source);
  const list = useAsync(
    () =>
      get<{ tickets: Incident[]; total: number; counts?: Counts }>(
        `/v1/tickets${qs({ status, priority, q, sort, source, assignee_id: assignee === 'mine' ? 'me' : assignee === 'unassigned' ? 'none' : undefined, page, limit: LIMIT, org_id: orgId ?? undefined, with_counts: true })}`,
      ),
    [status, priority, q, sort, assignee, source, page, orgId],
  );
  // The selection belongs to the page shown: a new page or new filters start empty.
  useEffect(() => setSelected(new Set()), [status, priority, q, sort, assignee, source, page, orgId]);
  // Typing searches after a short pause; Enter searches at once.
  useEffect(() => {
    if (search.trim() === q) return;
    const timer = setTimeout(() => setQuery({ q: search.trim() || undefined, page: undefined }), 300);
    return () => clearTimeout(timer);
  }, [search]);
  // Any change may move an incident in or out of the filtered page: reload, at most once per burst.
  const pending = useRef<ReturnType<typeof setTimeout>>();
  const live = useStream('/v1/incidents/stream', (e) => {
    if (e.type !== 'incident.created' && e.type !== 'incident.updated' && e.type !== 'resync') return;
    clearTimeout(pending.current);
    pending.current = setTimeout(list.reload, 250);
  });
  const total = list.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / LIMIT));
  const counts = list.data?.counts;
  const shown = list.data?.tickets ?? [];
  const allChecked = shown.length > 0 && shown.every((t) => selected.has(t.Id));
  const toggle = (id: number) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });

  return (
    <section class="view">
      <PageHeader title="Incidents" sub={list.data ? `${total} ${total === 1 ? 'incident' : 'incidents'}${filtered ? ' matching' : ''}` : undefined}>
        <LiveBadge state={live} />
        <button type="button" data-testid="new-incident" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          {creating ? 'Close' : 'New incident'}
        </button>
      </PageHeader>

      <MaintenanceBanner orgs={orgId === null ? orgs : orgs.filter((o) => o.id === orgId)} />
      {creating ? <CreateIncident onCancel={() => setCreating(false)} /> : null}

      <nav class="status-tabs" aria-label="Incidents by status" data-testid="status-counts">
        {[['', 'All'] as const, ...Object.entries(STATUS_LABEL)].map(([v, l]) => {
          const n = counts ? (v ? counts[v as keyof Counts] : Object.values(counts).reduce((a, b) => a + b, 0)) : undefined;
          return (
            <button
              key={v || 'all'}
              type="button"
              class={`status-tab${status === v ? ' current' : ''}`}
              aria-pressed={status === v}
              data-status={v || 'all'}
              onClick={() => setQuery({ status: v || undefined, page: undefined })}
            >
              {l} {n !== undefined ? <span class="count">{n}</span> : null}
            </button>
          );
        })}
      </nav>

      <form
        class="filters card"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ q: search.trim() || undefined, page: undefined });
        }}
      >
        <div class="field search-field">
          <label for="f-q">Search</label>
          <input id="f-q" type="search" data-testid="incident-search" value={search} maxLength={200} placeholder="Title, description, reference or #id" onInput={(e) => setSearch(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="f-sort">Sort</label>
          <select id="f-sort" value={sort || 'newest'} onChange={(e) => setQuery({ sort: e.currentTarget.value === 'newest' ? undefined : e.currentTarget.value, page: undefined })}>
            {Object.entries(SORT_LABEL).map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-priority">Priority</label>
          <select id="f-priority" value={priority} onChange={(e) => setQuery({ priority: e.currentTarget.value, page: undefined })}>
            <option value="">Any priority</option>
            {Object.entries(PRIORITY_LABEL).map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-assignee">Assignee</label>
          <select id="f-assignee" value={assignee} onChange={(e) => setQuery({ assignee: e.currentTarget.value, page: undefined })}>
            <option value="">Anyone</option>
            <option value="mine">Assigned to me</option>
            <option value="unassigned">Unassigned</option>
          </select>
        </div>
        <div class="field">
          <label for="f-source">Source</label>
          <select id="f-source" value={source} onChange={(e) => setQuery({ source: e.currentTarget.value, page: undefined })}>
            <option value="">Any source</option>
            {Object.entries(SOURCE_LABEL).map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
            <option value="integration">Integration (monitoring, mailbox)</option>
          </select>
        </div>
      </form>

      <ErrorAlert error={list.error} title="Incidents could not load." />
      {list.loading && !list.data ? <Loading label="Loading incidents" /> : null}
      {list.data && shown.length === 0 ? (
        <Empty title={filtered ? 'No incidents match these filters' : 'No incidents yet'}>
          {filtered ? 'Try another search or filter.' : 'New incidents from the API, alerts and this page appear here as they happen.'}
        </Empty>
      ) : null}
      {shown.length > 0 ? (
        <BulkBar
          ids={[...selected]}
          allChecked={allChecked}
          onAll={(on) => setSelected(on ? new Set(shown.map((t) => t.Id)) : new Set())}
          onDone={() => {
            setSelected(new Set());
            list.reload();
          }}
        />
      ) : null}
      {list.data && shown.length > 0 ? (
        <ul class="list card flush" data-testid="incident-list">
          {shown.map((t) => (
            <li key={t.Id} class="select-row">
              <input type="checkbox" class="row-check" aria-label={`Select #${t.Id} ${t.title}`} checked={selected.has(t.Id)} onChange={() => toggle(t.Id)} data-testid="incident-check" />
              <a class="list-row" href={`/app/incidents/${t.Id}`} data-testid="incident-row" data-id={t.Id}>
                <div class="list-main">
                  <span class="list-title">{t.title}</span>
                  <span class="list-meta muted">
                    #{t.Id} · {ago(t.created_at)} · <span data-testid="incident-row-source">{sourceLabel(t)}</span>
                    {t.assignee_id === null ? ' · unassigned' : ''}
                    {orgs.length > 1 ? ` · ${orgName(orgs, t.org_id)}` : ''}
                    {t.location_name ? ` · ${t.location_name}` : ''}
                  </span>
                </div>
                <div class="list-badges">
                  <PriorityBadge priority={t.priority} />
                  <StatusBadge status={t.status} />
                  <SlaBadge incident={t} />
                </div>
              </a>
            </li>
          ))}
        </ul>
      ) : null}
      <Pager page={page} pages={pages} onPage={(p) => setQuery({ page: p > 1 ? p : undefined })} />
    </section>
  );
}

/** Select all on the page, and move the selected incidents to one status (one PATCH each). */
function BulkBar({ ids, allChecked, onAll, onDone }: { ids: number[]; allChecked: boolean; onAll: (on: boolean) => void; onDone: () => void }) {
  const [to, setTo] = useState('resolved');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: number; failed: number } | null>(null);
  const apply = async () => {
    setBusy(true);
    setResult(null);
    const outcomes = await Promise.allSettled(ids.map((id) => patch<Incident>(`/v1/tickets/${id}`, { status: to })));
    const failed = outcomes.filter((o) => o.status === 'rejected').length;
    setResult({ ok: outcomes.length - failed, failed });
    setBusy(false);
    onDone();
  };
  return (
    <div class="bulk-bar card" data-testid="bulk-bar">
      <label class="check">
        <input type="checkbox" checked={allChecked} onChange={(e) => onAll(e.currentTarget.checked)} data-testid="select-all" /> Select all on this page
      </label>
      {ids.length > 0 ? (
        <div class="row">
          <span>{ids.length} selected</span>
          <label for="bulk-status" class="sr-only">
            New status
          </label>
          <select id="bulk-status" value={to} onChange={(e) => setTo(e.currentTarget.value)} data-testid="bulk-status">
            {Object.entries(STATUS_LABEL).map(([v, l]) => (
              <option key={v} value={v}>
                Mark {l.toLowerCase()}
              </option>
            ))}
          </select>
          <button type="button" disabled={busy} onClick={() => void apply()} data-testid="bulk-apply">
            {busy ? 'Saving…' : 'Apply'}
          </button>
        </div>
      ) : null}
      {result ? (
        <span role="status" class={result.failed ? 'field-error' : 'saved-note'} data-testid="bulk-result">
          {result.failed ? `${result.ok} changed, ${result.failed} could not be changed.` : `${result.ok} ${result.ok === 1 ? 'incident' : 'incidents'} changed.`}
        </span>
      ) : null}
    </div>
  );
}

function CreateIncident({ onCancel }: { onCancel: () => void }) {
  const { orgs, orgId } = useSession();
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [priority, setPriority] = useState('normal');
  const [location, setLocation] = useState('');
  const [org, setOrg] = useState(String(orgId ?? orgs.find((o) => o.primary)?.id ?? ''));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // One key per form: a double click or a retried request never makes two incidents.
  const [key] = useState(() => randomId('inc-'));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Made here, so its source says so (issue 20: not "api").
      const body: Record<string, unknown> = { title, priority, source: 'dashboard' };
      if (description.trim()) body.description = description;
      if (location.trim()) body.location_name = location.trim();
      if (org) body.org_id = Number(org);
      const created = await post<Incident>('/v1/tickets', body, { idempotencyKey: key });
      navigate(`/app/incidents/${created.Id}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <form class="card stack create-form" onSubmit={(e) => void submit(e)} data-testid="incident-form">
      <h2>New incident</h2>
      <ErrorAlert error={error} />
      <div class="field">
        <label for="inc-title">Title</label>
        <input id="inc-title" name="title" required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} placeholder="What happened?" />
        <FieldError error={error} name="title" />
      </div>
      <div class="field">
        <label for="inc-description">Description</label>
        <textarea id="inc-description" name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        <FieldError error={error} name="description" />
      </div>
      <div class="grid-2">
        <PriorityField id="inc-priority" value={priority} onChange={setPriority}>
          <small>SLA: urgent 1 h, high 4 h, normal 24 h, low 48 h.</small>
        </PriorityField>
        <div class="field">
          <label for="inc-location">Location</label>
          <input id="inc-location" name="location_name" maxLength={200} value={location} onInput={(e) => setLocation(e.currentTarget.value)} placeholder="Optional" />
          <FieldError error={error} name="location_name" />
        </div>
      </div>
      <OrgField id="inc-org" orgs={orgs} value={org} onChange={setOrg} error={error} />
      <div class="row">
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create incident'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
