// Where the incident is (issue #38): a small map of its position and arrival radius, who is inside
// the radius by position, and the radius itself, editable (PATCH arrival_radius_m, 10..50000 m).
// Who is inside is read from the timeline (the API keeps presence per incident and person but does
// not list it): a person's latest on_scene from position without a later departed is inside.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { patch } from '../../lib/api';
import { formatTime } from '../../lib/format';
import type { Incident, TimelineEvent } from '../types';
import { ErrorAlert, FieldError } from '../ui';
import type { IncidentMap } from './incident-map';
import { MapBox, useLazyMap } from './lazy-map';

export interface Inside {
  userId: number;
  name: string;
  at: string;
  lat: number | null;
  lng: number | null;
  /** They took the automatic arrival back (their position is still inside). */
  undone: boolean;
}

/** The people inside the radius by position, from the timeline (oldest first). */
export function insideOf(events: readonly TimelineEvent[]): Inside[] {
  const inside = new Map<number, Inside>();
  for (const e of events) {
    if (!e.actor) continue;
    const d = e.data as { source?: string; lat?: number | null; lng?: number | null; event_id?: number };
    if (e.type === 'on_scene' && d.source === 'position') inside.set(e.actor.user_id, { userId: e.actor.user_id, name: e.actor.user_name, at: e.at, lat: d.lat ?? null, lng: d.lng ?? null, undone: false });
    else if (e.type === 'departed') inside.delete(e.actor.user_id);
    else if (e.type === 'on_scene_undone') {
      const p = inside.get(e.actor.user_id);
      if (p) p.undone = true;
    }
  }
  return [...inside.values()];
}

export function IncidentPlace({ incident, events, canEdit, onChange }: { incident: Incident; events: TimelineEvent[] | undefined; canEdit: boolean; onChange: (i: Incident) => void }) {
  const inside = useMemo(() => insideOf(events ?? []), [events]);
  const [radius, setRadius] = useState(String(incident.arrival_radius_m));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => setRadius(String(incident.arrival_radius_m)), [incident.arrival_radius_m]);
  const { el, map, error: mapError } = useLazyMap<IncidentMap>((node, tiles) => import('./incident-map').then((m) => m.createIncidentMap(node, tiles)));
  useEffect(() => {
    if (!map || incident.lat === null || incident.lng === null) return;
    const arrivals = inside.filter((p) => p.lat !== null && p.lng !== null).map((p) => ({ lat: p.lat!, lng: p.lng!, label: `${p.name} arrived ${formatTime(p.at)}` }));
    map.show({ lat: incident.lat, lng: incident.lng }, incident.arrival_radius_m, `Incident #${incident.Id} · ${incident.title}`, arrivals);
  }, [map, incident.lat, incident.lng, incident.arrival_radius_m, inside]);

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      // As typed: an empty or out-of-range radius is the API's 422 beside the field.
      const value = radius.trim() === '' ? radius : Number(radius);
      const updated = await patch<Incident>(`/v1/tickets/${incident.Id}`, { arrival_radius_m: value });
      onChange(updated);
      setSaved(`Saved: arrival radius ${updated.arrival_radius_m} m.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="card stack incident-place" data-testid="incident-place">
      <h2>Arrival</h2>
      <MapBox el={el} error={mapError} label={`Map of the incident and its arrival radius of ${incident.arrival_radius_m} m`} testId="incident-map" />
      <p class="small-print muted">The assignee is on scene automatically when their position comes within the radius.</p>
      <div data-testid="incident-inside">
        {inside.length === 0 ? (
          <p class="muted">Nobody is inside the radius by position.</p>
        ) : (
          <ul class="list">
            {inside.map((p) => (
              <li key={p.userId}>
                <strong>{p.name}</strong> inside since {formatTime(p.at)}
                {p.undone ? <span class="muted"> (arrival undone by them)</span> : null}
              </li>
            ))}
          </ul>
        )}
      </div>
      {canEdit ? (
        <form class="stack" onSubmit={(e) => void save(e)} data-testid="arrival-radius-form" noValidate>
          <ErrorAlert error={error} />
          <div class="row tight bottom-aligned">
            <div class="field grow">
              <label for="inc-arrival_radius_m">Arrival radius (metres)</label>
              <input id="inc-arrival_radius_m" name="arrival_radius_m" type="number" inputMode="numeric" min={10} max={50000} value={radius} onInput={(e) => setRadius(e.currentTarget.value)} data-testid="arrival-radius" />
            </div>
            <button type="submit" class="secondary" disabled={busy || radius === String(incident.arrival_radius_m)} data-testid="arrival-radius-save">
              Save
            </button>
          </div>
          <FieldError error={error} name="arrival_radius_m" />
        </form>
      ) : null}
      {saved ? (
        <small class="saved-note" role="status" data-testid="arrival-radius-saved">
          {saved}
        </small>
      ) : null}
    </div>
  );
}
