// Incidents on the Signals map: open and in-progress incidents with a position, beside the
// responders' beacons. Selecting one (on the map or in the list) shows its nearest responders and
// assigns with one click.
import { useState } from 'preact/hooks';
import { get, patch } from '../../lib/api';
import type { Incident } from '../types';
import { ErrorAlert, PriorityBadge, useAsync, type Async } from '../ui';
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
