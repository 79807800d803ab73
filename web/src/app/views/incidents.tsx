// Incidents: the list with status and priority filters, live updates, and the new-incident form.
import { useRef, useState } from 'preact/hooks';
import { get, post, qs, randomId } from '../../lib/api';
import { ago } from '../../lib/format';
import { navigate, setQuery, type Loc } from '../router';
import { orgName, useSession } from '../session';
import { useStream } from '../sse';
import type { Incident } from '../types';
import { Empty, ErrorAlert, FieldError, LiveBadge, Loading, PageHeader, Pager, PriorityBadge, PRIORITY_LABEL, SlaBadge, STATUS_LABEL, StatusBadge, useAsync } from '../ui';

const LIMIT = 20;

export function IncidentsView({ loc }: { loc: Loc }) {
  const { orgId, orgs } = useSession();
  const status = loc.query.get('status') ?? '';
  const priority = loc.query.get('priority') ?? '';
  const page = Math.max(1, Number(loc.query.get('page')) || 1);
  const [creating, setCreating] = useState(loc.query.get('new') === '1');
  const list = useAsync(
    () => get<{ tickets: Incident[]; total: number }>(`/v1/tickets${qs({ status, priority, page, limit: LIMIT, org_id: orgId ?? undefined })}`),
    [status, priority, page, orgId],
  );
  // Any change may move an incident in or out of the filtered page: reload, at most once per burst.
  const pending = useRef<ReturnType<typeof setTimeout>>();
  const live = useStream('/v1/incidents/stream', (e) => {
    if (e.type !== 'incident.created' && e.type !== 'incident.updated') return;
    clearTimeout(pending.current);
    pending.current = setTimeout(list.reload, 250);
  });
  const total = list.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / LIMIT));

  return (
    <section class="view">
      <PageHeader title="Incidents" sub={list.data ? `${total} ${total === 1 ? 'incident' : 'incidents'}${status || priority ? ' matching' : ''}` : undefined}>
        <LiveBadge state={live} />
        <button type="button" data-testid="new-incident" onClick={() => setCreating(!creating)} aria-expanded={creating}>
          {creating ? 'Close' : 'New incident'}
        </button>
      </PageHeader>

      {creating ? <CreateIncident onCancel={() => setCreating(false)} /> : null}

      <div class="filters card" role="search">
        <div class="field">
          <label for="f-status">Status</label>
          <select id="f-status" value={status} onChange={(e) => setQuery({ status: e.currentTarget.value, page: undefined })}>
            <option value="">Any status</option>
            {Object.entries(STATUS_LABEL).map(([v, l]) => (
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
      </div>

      <ErrorAlert error={list.error} title="Incidents could not load." />
      {list.loading && !list.data ? <Loading label="Loading incidents" /> : null}
      {list.data && list.data.tickets.length === 0 ? (
        <Empty title={status || priority ? 'No incidents match these filters' : 'No incidents yet'}>
          {status || priority ? 'Try another status or priority.' : 'New incidents from the API, alerts and this page appear here as they happen.'}
        </Empty>
      ) : null}
      {list.data && list.data.tickets.length > 0 ? (
        <ul class="list card flush" data-testid="incident-list">
          {list.data.tickets.map((t) => (
            <li key={t.Id}>
              <a class="list-row" href={`/app/incidents/${t.Id}`} data-testid="incident-row">
                <div class="list-main">
                  <span class="list-title">{t.title}</span>
                  <span class="list-meta muted">
                    #{t.Id} · {ago(t.created_at)}
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
      const body: Record<string, unknown> = { title, priority };
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
        <div class="field">
          <label for="inc-priority">Priority</label>
          <select id="inc-priority" name="priority" value={priority} onChange={(e) => setPriority(e.currentTarget.value)}>
            {Object.entries(PRIORITY_LABEL).map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
          <small>SLA: urgent 1 h, high 4 h, normal 24 h, low 48 h.</small>
        </div>
        <div class="field">
          <label for="inc-location">Location</label>
          <input id="inc-location" name="location_name" maxLength={200} value={location} onInput={(e) => setLocation(e.currentTarget.value)} placeholder="Optional" />
          <FieldError error={error} name="location_name" />
        </div>
      </div>
      {orgs.length > 1 ? (
        <div class="field">
          <label for="inc-org">Organization</label>
          <select id="inc-org" value={org} onChange={(e) => setOrg(e.currentTarget.value)}>
            {orgs.map((o) => (
              <option key={o.id} value={String(o.id)}>
                {o.name}
              </option>
            ))}
          </select>
          <FieldError error={error} name="org_id" />
        </div>
      ) : null}
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
