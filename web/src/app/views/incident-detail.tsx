// One incident: status and priority, the SLA, the replies (public or internal), the status page link, and
// its escalation (the policy's progress, "Escalate now", who was paged how on the timeline).
import { useState } from 'preact/hooks';
import { ApiError, get, patch, post } from '../../lib/api';
import { formatDateTime } from '../../lib/format';
import { orgName, useSession } from '../session';
import { useStream } from '../sse';
import type { Incident, Reply, TimelineEvent } from '../types';
import { DispatchCard, Timeline } from './incident-dispatch';
import { PhotoStrip, type Photo } from '../photo-viewer';
import { loadDirectory } from './escalation-policies';
import { EscalationCard } from './incident-paging';
import { IncidentPlace } from './incident-place';

/** The photos sent to the incident from the field (capture signals on its timeline), oldest first. */
const photosOf = (events: TimelineEvent[]): Photo[] =>
  events.flatMap((e) =>
    e.type === 'signal' && typeof e.data.image_url === 'string'
      ? [{ url: e.data.image_url, caption: typeof e.data.note === 'string' && e.data.note ? e.data.note : null, by: e.actor?.user_name ?? null, at: e.at }]
      : [],
  );
import { CopyButton, Empty, ErrorAlert, FieldError, LiveBadge, Loading, PriorityBadge, PRIORITY_LABEL, SlaBadge, STATUS_LABEL, StatusBadge, sourceLabel, useAsync } from '../ui';

export function IncidentDetailView({ id }: { id: number }) {
  const { orgs } = useSession();
  const incident = useAsync(() => get<Incident>(`/v1/tickets/${id}`), [id]);
  const replies = useAsync(() => get<{ replies: Reply[] }>(`/v1/tickets/${id}/replies`).then((r) => r.replies), [id]);
  const [saving, setSaving] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<unknown>(null);
  const [savedNote, setSavedNote] = useState<string | null>(null);

  const timeline = useAsync(() => get<{ events: TimelineEvent[] }>(`/v1/tickets/${id}/timeline`).then((r) => r.events), [id]);
  // The org's people, schedules and teams: the names of whom the timeline says was paged.
  const slug = orgs.find((o) => o.id === incident.data?.org_id)?.slug;
  const dir = useAsync(() => (slug ? loadDirectory(slug) : Promise.resolve(undefined)), [slug]);
  const addEvent = (e: TimelineEvent) => timeline.setData((list) => (list && !list.some((x) => x.id === e.id) ? [...list, e] : list));
  const addReply = (r: Reply) => replies.setData((list) => (list && !list.some((x) => x.id === r.id) ? [...list, r] : list));
  const live = useStream('/v1/incidents/stream', (e) => {
    if (e.type === 'resync') {
      incident.reload();
      timeline.reload();
      replies.reload();
      return;
    }
    if ((e.type === 'incident.updated' || e.type === 'incident.assigned') && (e.payload as Incident).Id === id) incident.setData(() => e.payload as Incident);
    if (e.type === 'incident.timeline' && (e.payload as TimelineEvent).incident_id === id) addEvent(e.payload as TimelineEvent);
    if (e.type === 'incident.reply' && (e.payload as Reply).incident_id === id) addReply(e.payload as Reply);
  });

  const change = async (field: 'status' | 'priority', value: string) => {
    setSaving(field);
    setSaveError(null);
    setSavedNote(null);
    try {
      const updated = await patch<Incident>(`/v1/tickets/${id}`, { [field]: value });
      incident.setData(() => updated);
      // A saved change says so (issue 20).
      setSavedNote(`Saved: ${field === 'status' ? `status ${STATUS_LABEL[value]?.toLowerCase() ?? value}` : `priority ${PRIORITY_LABEL[value]?.toLowerCase() ?? value}`}.`);
    } catch (err) {
      setSaveError(err);
    } finally {
      setSaving(null);
    }
  };

  if (incident.error instanceof ApiError && incident.error.status === 404) {
    return (
      <Empty title="Incident not found">
        It was deleted, or it belongs to an organization you are not in. <a href="/app/incidents">Back to incidents</a>
      </Empty>
    );
  }
  if (incident.error) return <ErrorAlert error={incident.error} title="The incident could not load." />;
  const t = incident.data;
  if (!t) return <Loading label="Loading incident" />;
  const statusPath = `/incidents/status/${encodeURIComponent(t.customer_token)}`;

  return (
    <section class="view">
      <a class="back" href="/app/incidents">
        ← Incidents
      </a>
      <header class="page-header">
        <div>
          <h1 data-testid="incident-title">{t.title}</h1>
          <div class="row badges">
            <StatusBadge status={t.status} />
            <PriorityBadge priority={t.priority} />
            <SlaBadge incident={t} />
            <LiveBadge state={live} />
          </div>
        </div>
      </header>

      <div class="detail-grid">
        <div class="stack">
          <div class="card stack">
            <h2>Details</h2>
            {t.description ? <p class="prewrap">{t.description}</p> : <p class="muted">No description.</p>}
            <dl class="facts">
              <dt>Incident</dt>
              <dd>#{t.Id}</dd>
              <dt>Opened</dt>
              <dd>{formatDateTime(t.created_at)}</dd>
              <dt>SLA due</dt>
              <dd>{formatDateTime(t.sla_due_at)}</dd>
              {t.resolved_at ? (
                <>
                  <dt>Resolved</dt>
                  <dd>{formatDateTime(t.resolved_at)}</dd>
                </>
              ) : null}
              <dt>Source</dt>
              <dd data-testid="incident-source">
                {sourceLabel(t)}
                {t.source_ref ? ` (${t.source_ref})` : ''}
              </dd>
              {t.location_name || t.lat !== null ? (
                <>
                  <dt>Location</dt>
                  <dd>
                    {t.location_name ?? ''}
                    {t.lat !== null && t.lng !== null ? ` ${t.lat.toFixed(5)}, ${t.lng.toFixed(5)}` : ''}
                  </dd>
                  <dt>Arrival radius</dt>
                  <dd data-testid="incident-arrival-radius">{t.arrival_radius_m} m (the assignee is on scene automatically within it)</dd>
                </>
              ) : null}
              {orgs.length > 1 ? (
                <>
                  <dt>Organization</dt>
                  <dd>{orgName(orgs, t.org_id)}</dd>
                </>
              ) : null}
            </dl>
          </div>
          <PhotoStrip photos={photosOf(timeline.data ?? [])} />
          <Replies id={id} replies={replies.data} error={replies.error} onAdded={addReply} />
          <Timeline events={timeline} incident={t} dir={dir.data} />
        </div>

        <aside class="stack">
          <EscalationCard incident={t} events={timeline.data} onChange={(i) => incident.setData(() => i)} />
          <DispatchCard incident={t} onChange={(i) => incident.setData(() => i)} />
          {t.lat !== null && t.lng !== null ? <IncidentPlace incident={t} events={timeline.data} canEdit={t.status === 'open' || t.status === 'in_progress'} onChange={(i) => incident.setData(() => i)} /> : null}
          <div class="card stack">
            <h2>Triage</h2>
            <ErrorAlert error={saveError} />
            <div class="field">
              <label for="inc-status">Status</label>
              <select id="inc-status" data-testid="status-select" value={t.status} disabled={saving !== null} onChange={(e) => void change('status', e.currentTarget.value)}>
                {Object.entries(STATUS_LABEL).map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="inc-priority">Priority</label>
              <select id="inc-priority" data-testid="priority-select" value={t.priority} disabled={saving !== null} onChange={(e) => void change('priority', e.currentTarget.value)}>
                {Object.entries(PRIORITY_LABEL).map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
              <small>Changing the priority recomputes the SLA from the opening time.</small>
            </div>
            {saving ? <small class="muted">Saving…</small> : null}
            {!saving && savedNote ? (
              <small class="saved-note" role="status" data-testid="saved-note">
                {savedNote}
              </small>
            ) : null}
          </div>
          <div class="card stack">
            <h2>Customer status page</h2>
            <p class="muted">Shows the title, the status, status changes and public replies only. Anyone with the link can read it.</p>
            <div class="row">
              <a class="button secondary" href={statusPath} target="_blank" rel="noopener" data-testid="status-page-link">
                Open status page
              </a>
              <CopyButton text={t.customer_status_url} label="Copy link" />
            </div>
          </div>
        </aside>
      </div>
    </section>
  );
}

function Replies({ id, replies, error, onAdded }: { id: number; replies: Reply[] | undefined; error: unknown; onAdded: (r: Reply) => void }) {
  const [body, setBody] = useState('');
  const [isPublic, setPublic] = useState(false);
  const [busy, setBusy] = useState(false);
  const [postError, setPostError] = useState<unknown>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setPostError(null);
    try {
      const reply = await post<Reply>(`/v1/tickets/${id}/replies`, { body, public: isPublic });
      onAdded(reply);
      setBody('');
      setPublic(false);
    } catch (err) {
      setPostError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="card stack">
      <h2>Replies</h2>
      <ErrorAlert error={error} title="Replies could not load." />
      {replies === undefined && !error ? <Loading label="Loading replies" /> : null}
      {replies && replies.length === 0 ? <p class="muted">No replies yet. Internal notes stay with your team; public replies appear on the status page.</p> : null}
      {replies && replies.length > 0 ? (
        <ol class="thread" data-testid="replies">
          {replies.map((r) => (
            <li key={r.id} class={`reply ${r.public ? 'public' : 'internal'}`} data-testid="reply" data-public={String(r.public)}>
              <div class="reply-head">
                <strong>{r.author_name ?? 'System'}</strong>
                <span class={`badge ${r.public ? 'brand' : ''}`}>{r.public ? 'Public' : 'Internal'}</span>
                <span class="muted">{formatDateTime(r.created_at)}</span>
              </div>
              <p class="prewrap">{r.body}</p>
            </li>
          ))}
        </ol>
      ) : null}
      <form class="stack reply-form" onSubmit={(e) => void submit(e)} data-testid="reply-form">
        <ErrorAlert error={postError} />
        <div class="field">
          <label for="reply-body">Add a reply</label>
          <textarea id="reply-body" name="body" required value={body} onInput={(e) => setBody(e.currentTarget.value)} placeholder={isPublic ? 'Visible to the customer on the status page' : 'Only your team sees internal notes'} />
          <FieldError error={postError} name="body" />
        </div>
        <div class="row">
          <label class="check">
            <input type="checkbox" name="public" data-testid="reply-public" checked={isPublic} onChange={(e) => setPublic(e.currentTarget.checked)} />
            Public: show on the status page
          </label>
          <span class="spacer" />
          <button type="submit" disabled={busy || !body.trim()}>
            {busy ? 'Sending…' : isPublic ? 'Post public reply' : 'Add internal note'}
          </button>
        </div>
      </form>
    </div>
  );
}
