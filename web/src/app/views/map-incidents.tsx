// Incidents on the Signals map: open and in-progress incidents with a position, beside the
// responders' beacons. Selecting one (on the map or in the list) shows its nearest responders and
// assigns with one click. "Create incident here" (issue 20) opens IncidentHereForm at a point
// picked on the map or at a signal's position.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, patch, post, randomId } from '../../lib/api';
import { useSession } from '../session';
import type { Incident } from '../types';
import { ErrorAlert, FieldError, PriorityBadge, useAsync, type Async } from '../ui';
import { OrgField, PriorityField } from './incident-fields';
import { NearestResponders } from './incident-dispatch';

export const incidentKey = (id: number) => `incident-${id}`;

/** Open and in-progress incidents that have a position (newest 100 of each). */
export function useMapIncidents(orgId: number | null): Async<Incident[]> {
  return useAsync(async () => {
    const org = orgId === null ? '' : `&org_id=${orgId}`;
    const [open, busy] = await Promise.all(
      ['open', 'in_progress'].map((s) => get<{ tickets: Incident[] }>(`/v1/tickets?status=${s}&limit=100${org}`).then((r) => r.tickets)),
    );
    return [...open!, ...busy!].filter((i) => i.lat !== null && i.lng !== null);
  }, [orgId]);
}

export function SelectedIncident({ incidents, selected, onSelect }: { incidents: Async<Incident[]>; selected: number | null; onSelect: (id: number | null) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const list = incidents.data ?? [];
  const incident = list.find((i) => i.Id === selected);
  const assign = async (userId: number) => {
    if (!incident) return;
    setBusy(true);
    setError(null);
    try {
      const updated = await patch<Incident>(`/v1/tickets/${incident.Id}`, { assignee_id: userId });
      incidents.setData((l) => l?.map((i) => (i.Id === updated.Id ? updated : i)));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card stack" data-testid="map-incidents">
      <h2>
        Incidents on the map <span class="count">{list.length}</span>
      </h2>
      <ErrorAlert error={incidents.error} title="Incidents could not load." />
      <ul class="device-list">
        {list.map((i) => (
          <li key={i.Id}>
            <button type="button" class={`device ${i.Id === selected ? 'selected' : ''}`} data-testid="map-incident" data-id={i.Id} onClick={() => onSelect(i.Id === selected ? null : i.Id)}>
              <PriorityBadge priority={i.priority} />
              <span class="device-main">
                <strong>{i.title}</strong>
              </span>
            </button>
          </li>
        ))}
      </ul>
      {incident ? (
        <div class="stack" data-testid="selected-incident">
          <a href={`/app/incidents/${incident.Id}`} data-testid="selected-incident-link">
            Open incident #{incident.Id}
          </a>
          <ErrorAlert error={error} />
          <NearestResponders incident={incident} busy={busy} assign={(id) => void assign(id)} />
        </div>
      ) : null}
    </div>
  );
}

/** Where a new incident goes: a point picked on the map (or its centre), or a signal's position. */
export interface IncidentDraft {
  lat: number;
  lng: number;
  org_id: number | null;
  from: 'map' | 'signal';
  description?: string;
  /** The signal's author, named in the heading. */
  who?: string;
  /** The signal it is made from. */
  signalId?: number;
}

/**
 * The small form of "create incident here": title, priority, description, with the position
 * filled in. It creates the incident as the incidents page does (POST /v1/tickets, source
 * dashboard) with the spec's lat and lng.
 */
export function IncidentHereForm({ draft, onCancel, onCreated }: { draft: IncidentDraft; onCancel: () => void; onCreated: (i: Incident) => void }) {
  const { orgs } = useSession();
  const [title, setTitle] = useState('');
  const [priority, setPriority] = useState('normal');
  const [description, setDescription] = useState(draft.description ?? '');
  const [org, setOrg] = useState(String(draft.org_id ?? orgs.find((o) => o.primary)?.id ?? ''));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // One key per form: a double click or a retried request never makes two incidents.
  const [key] = useState(() => randomId('inc-'));
  const titleRef = useRef<HTMLInputElement>(null);
  useEffect(() => titleRef.current?.focus({ preventScroll: false }), []);
  const lat = Number(draft.lat.toFixed(6));
  const lng = Number(draft.lng.toFixed(6));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, unknown> = { title, priority, source: 'dashboard', lat, lng };
      if (description.trim()) body.description = description;
      if (org) body.org_id = Number(org);
      onCreated(await post<Incident>('/v1/tickets', body, { idempotencyKey: key }));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <form id="incident-here" class="stack map-form" onSubmit={(e) => void submit(e)} data-testid="incident-here-form" aria-labelledby="incident-here-title">
      <h2 id="incident-here-title">{draft.from === 'signal' ? `New incident at ${draft.who ?? 'the signal'}’s position` : 'New incident at this point'}</h2>
      <p class="muted small-print" data-testid="incident-here-position">
        Position {lat.toFixed(5)}, {lng.toFixed(5)}
      </p>
      <ErrorAlert error={error} />
      <div class="grid-2">
        <div class="field">
          <label for="here-title">Title</label>
          <input id="here-title" ref={titleRef} name="title" required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} placeholder="What happened?" />
          <FieldError error={error} name="title" />
        </div>
        <PriorityField id="here-priority" value={priority} onChange={setPriority} />
      </div>
      <div class="field">
        <label for="here-description">Description</label>
        <textarea id="here-description" class="short" name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        <FieldError error={error} name="description" />
      </div>
      <OrgField id="here-org" orgs={orgs} value={org} onChange={setOrg} error={error} />
      <div class="row">
        <button type="submit" disabled={busy} data-testid="incident-here-submit">
          {busy ? 'Creating…' : 'Create incident'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
