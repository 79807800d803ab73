// The dispatcher's side of one incident: acknowledgement, the assignee picker, the nearest
// responders (assign with one click) and the timeline, kept live by the detail view's stream.
import { useState } from 'preact/hooks';
import { PhotoThumb } from '../photo-viewer';
import { get, patch, post } from '../../lib/api';
import { formatDateTime } from '../../lib/format';
import { useSession } from '../session';
import type { Incident, Member, Responder, TimelineEvent } from '../types';
import { ErrorAlert, Loading, relative, sourceLabel, STATUS_LABEL, useAsync, type Async } from '../ui';
import type { Directory } from './escalation-policies';
import { describePaging } from './incident-paging';

const distance = (m: number | null) => (m === null ? 'no incident position' : m < 1000 ? `${m} m` : `${(m / 1000).toFixed(1)} km`);

/** One line per timeline event, in words. */
function describe(e: TimelineEvent, names: Map<number, string>, incident?: Incident): string {
  const d = e.data;
  const who = (id: unknown) => (typeof id === 'number' ? (names.get(id) ?? `user ${id}`) : 'nobody');
  switch (e.type) {
    case 'created': {
      // An integration's incident names it and its tool (the event carries both since issue 33; older ones: the incident's).
      const integration =
        typeof d.integration_name === 'string'
          ? { name: d.integration_name, tool: typeof d.integration_tool === 'string' ? d.integration_tool : null }
          : d.integration_id !== undefined
            ? (incident?.integration ?? null)
            : null;
      return `Opened (${String(d.priority)}, from ${sourceLabel({ source: String(d.source), integration })})`;
    }
    case 'status_changed':
      return `Status: ${STATUS_LABEL[String(d.to)] ?? String(d.to)}`;
    case 'priority_changed':
      return `Priority: ${String(d.from)} → ${String(d.to)}`;
    case 'assigned':
      return `Assigned to ${who(d.assignee_id)}`;
    case 'unassigned':
      return 'Unassigned';
    case 'en_route':
    case 'on_scene':
      return `${e.type === 'en_route' ? 'En route' : d.source === 'position' ? 'Arrived automatically (position)' : 'On scene'}${typeof d.lat === 'number' ? ` at ${d.lat.toFixed(5)}, ${(d.lng as number).toFixed(5)}` : ''}`;
    case 'departed':
      return `Left the scene (position)${typeof d.lat === 'number' ? ` at ${d.lat.toFixed(5)}, ${(d.lng as number).toFixed(5)}` : ''}`;
    case 'on_scene_undone':
      return 'Automatic arrival undone';
    case 'reply':
      return `${d.public ? 'Public reply' : 'Internal note'}: ${String(d.body)}`;
    case 'signal':
      return `${d.image_url ? 'Photo' : String(d.signal_type)}${typeof d.note === 'string' && d.note ? `: ${d.note}` : ''}`;
    case 'sla_warning':
      return 'SLA warning';
    case 'sla_breached':
      return 'SLA breached';
    case 'acknowledged':
    case 'escalated':
    case 'paged':
    case 'notified':
    case 'escalation_skipped':
    case 'escalation_exhausted':
      // Paging events are said by describePaging (incident-paging.tsx), which the timeline asks first.
      return e.type;
    case 'alert_repeated':
      return `Alert repeated (${String(d.count)} times in all)`;
    default:
      return (e.type as string).replace(/_/g, ' ');
  }
}

export function Timeline({ events, incident, dir }: { events: Async<TimelineEvent[]>; incident?: Incident; dir?: Directory | undefined }) {
  const members = new Map<number, string>();
  for (const m of dir?.members ?? []) members.set(m.user_id, m.name);
  for (const e of events.data ?? []) if (e.actor) members.set(e.actor.user_id, e.actor.user_name);
  const who = (id: unknown) => (typeof id === 'number' ? (members.get(id) ?? `user ${id}`) : 'nobody');
  return (
    <div class="card stack">
      <h2>Timeline</h2>
      <ErrorAlert error={events.error} title="The timeline could not load." />
      {!events.data && !events.error ? <Loading label="Loading timeline" /> : null}
      <ol class="timeline" data-testid="timeline">
        {(events.data ?? []).map((e) => {
          // Paging events name their people themselves ("Paged Ann (level 1, schedule Primary)").
          const paging = describePaging(e, who, dir);
          return (
            <li key={e.id} data-testid="timeline-event" data-type={e.type}>
              <span class="muted small">{formatDateTime(e.at)}</span>{' '}
              {paging !== null ? (
                <span data-testid="timeline-paging">{paging}</span>
              ) : (
                <>
                  <strong>{e.actor?.user_name ?? 'Muster'}</strong> {describe(e, members, incident)}
                </>
              )}
              {e.type === 'signal' && typeof e.data.image_url === 'string' ? (
                <PhotoThumb url={e.data.image_url} caption={typeof e.data.note === 'string' && e.data.note ? e.data.note : null} by={e.actor?.user_name ?? null} at={e.at} />
              ) : null}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

export function DispatchCard({ incident, onChange }: { incident: Incident; onChange: (i: Incident) => void }) {
  const { orgs } = useSession();
  const slug = orgs.find((o) => o.id === incident.org_id)?.slug;
  const members = useAsync(() => (slug ? get<{ members: Member[] }>(`/v1/orgs/${slug}/members`).then((r) => r.members) : Promise.resolve([])), [slug]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [savedNote, setSavedNote] = useState<string | null>(null);
  const act = async (fn: () => Promise<Incident>, done: string) => {
    setBusy(true);
    setError(null);
    setSavedNote(null);
    try {
      onChange(await fn());
      setSavedNote(done);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const assign = (userId: number | null) =>
    act(() => patch<Incident>(`/v1/tickets/${incident.Id}`, { assignee_id: userId }), userId === null ? 'Saved: nobody assigned.' : `Saved: assigned to ${nameOf(userId) ?? 'them'}.`);
  const nameOf = (id: number | null | undefined) => (id === null || id === undefined ? null : (members.data?.find((m) => m.user_id === id)?.name ?? `user ${id}`));

  return (
    <div class="card stack" data-testid="dispatch-card">
      <h2>Dispatch</h2>
      <ErrorAlert error={error} />
      {savedNote && !busy ? (
        <p class="saved-note" role="status" data-testid="dispatch-saved">
          {savedNote}
        </p>
      ) : null}
      <p data-testid="ack-state" data-acknowledged={String(Boolean(incident.acknowledged_at))}>
        {incident.acknowledged_at
          ? `Acknowledged by ${nameOf(incident.acknowledged_by) ?? 'someone'} ${relative(incident.acknowledged_at)}`
          : incident.assignee_id
            ? `Waiting for ${nameOf(incident.assignee_id) ?? 'the assignee'} to acknowledge`
            : 'Nobody assigned'}
      </p>
      {!incident.acknowledged_at ? (
        <button type="button" class="secondary" disabled={busy} data-testid="acknowledge" onClick={() => void act(() => post<Incident>(`/v1/tickets/${incident.Id}/acknowledge`), 'Saved: acknowledged.')}>
          Acknowledge
        </button>
      ) : null}
      <div class="field">
        <label for="inc-assignee">Assignee</label>
        <select id="inc-assignee" data-testid="assignee-select" value={incident.assignee_id ?? ''} disabled={busy} onChange={(e) => void assign(e.currentTarget.value ? Number(e.currentTarget.value) : null)}>
          <option value="">Nobody</option>
          {(members.data ?? []).map((m) => (
            <option key={m.user_id} value={m.user_id}>
              {m.name}
            </option>
          ))}
        </select>
      </div>
      <NearestResponders incident={incident} busy={busy} assign={(id) => void assign(id)} />
    </div>
  );
}

/** The incident's nearest responders with distances; one click assigns (incident page and map). */
export function NearestResponders({ incident, busy, assign }: { incident: Incident; busy: boolean; assign: (userId: number) => void }) {
  const responders = useAsync(() => get<{ responders: Responder[] }>(`/v1/tickets/${incident.Id}/responders?limit=8`).then((r) => r.responders), [incident.Id, incident.assignee_id]);
  return (
    <>
      <h3>Nearest responders</h3>
      <ErrorAlert error={responders.error} />
      {responders.data && responders.data.length === 0 ? <p class="muted small">Nobody in this organization has a live beacon.</p> : null}
      <ul class="responders" data-testid="responders">
        {(responders.data ?? []).map((r) => (
          <li key={r.user_id} data-testid="responder" data-user-id={r.user_id}>
            <span>
              <strong>{r.user_name}</strong> <span class="muted small">{distance(r.distance_m)} · seen {relative(r.last_seen_at)} · {r.open_assignments} open</span>
            </span>
            {r.user_id === incident.assignee_id ? (
              <span class="badge brand">Assigned</span>
            ) : (
              <button type="button" class="small" disabled={busy} data-testid="assign-responder" onClick={() => assign(r.user_id)}>
                Assign
              </button>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}
