// "My incidents": the incidents assigned to the signed-in responder, live (one incident stream),
// with acknowledge, en route, on scene (with the phone's position; read back from the timeline
// after a reload), a linked note, and resolve (asked once).
// Every action goes through the outbox like a signal, so it survives being offline.
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../lib/api';
import { resizePhoto, type Resized } from './photo';
import type { QueuedSignal } from './queue';
import { onIncidentEvent } from './stream';
import type { Fix, MyIncident } from './types';

export type Act = (target: NonNullable<QueuedSignal['target']>, withPosition?: boolean) => Promise<string | null>;
export type LinkNote = (incident: { Id: number; org_id: number }, note: string) => Promise<string | null>;
/** A photo for an incident: resized like the Photo panel's, uploaded through the outbox, then a `capture` with its `ticket_id`. */
export type LinkPhoto = (incident: { Id: number; org_id: number }, photo: Blob, caption: string) => Promise<string | null>;

/** Take or choose a photo for one incident, preview it with an optional caption, send it to its timeline. */
function IncidentPhoto({ incident, linkPhoto }: { incident: MyIncident; linkPhoto: LinkPhoto }) {
  const [photo, setPhoto] = useState<(Resized & { url: string }) | null>(null);
  const [caption, setCaption] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => () => photo && URL.revokeObjectURL(photo.url), [photo]);
  const id = `incident-photo-${incident.Id}`;
  const choose = async (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    setError(null);
    setBusy(true);
    try {
      const resized = await resizePhoto(file);
      setPhoto({ ...resized, url: URL.createObjectURL(resized.blob) });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
      input.value = '';
    }
  };
  const submit = async () => {
    if (!photo) return;
    setBusy(true);
    const err = await linkPhoto(incident, photo.blob, caption.trim());
    setBusy(false);
    if (err) return setError(err);
    setPhoto(null);
    setCaption('');
  };
  return (
    <div class="incident-photo">
      <input id={id} class="visually-hidden" type="file" accept="image/*" capture="environment" data-testid="my-photo-input" aria-label={`Photo for ${incident.title}`} onChange={(e) => void choose(e)} />
      {!photo && (
        <label for={id} class="button secondary small-button" data-testid="my-photo-take" aria-busy={busy}>
          {busy ? 'Preparing photo…' : 'Add a photo'}
        </label>
      )}
      {photo && (
        <div class="photo-preview">
          <img src={photo.url} alt={`The photo for ${incident.title}`} data-testid="my-photo-thumb" />
          <label for={`${id}-caption`}>Caption (optional)</label>
          <input id={`${id}-caption`} data-testid="my-photo-caption" value={caption} maxLength={5000} onInput={(e) => setCaption(e.currentTarget.value)} />
          <div class="actions">
            <button type="button" class="secondary small-button" disabled={busy} onClick={() => setPhoto(null)}>
              Discard
            </button>
            <button type="button" class="small-button grow" data-testid="my-photo-send" disabled={busy} onClick={() => void submit()}>
              {busy ? 'Saving…' : 'Send photo to this incident'}
            </button>
          </div>
        </div>
      )}
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

const OPEN = (i: MyIncident) => i.status === 'open' || i.status === 'in_progress';

/** The assigned incidents, reloaded whenever the stream says something about incidents changed. */
function useMyIncidents(userId: number): { list: MyIncident[] | null; error: string | null } {
  const [list, setList] = useState<MyIncident[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    const load = () =>
      get<{ tickets: MyIncident[] }>('/v1/tickets?assignee_id=me&limit=50')
        .then((r) => !stopped && (setList(r.tickets.filter(OPEN)), setError(null)))
        .catch(() => !stopped && setError('Could not load your incidents; showing the last list.'));
    void load();
    const off = onIncidentEvent((e) => {
      // Assigned to me, taken from me, or a change to one of mine: the list is short, reload it.
      if (e.type === 'incident.assigned' || e.type === 'incident.updated' || e.type === 'open') void load();
    });
    return () => {
      stopped = true;
      off();
    };
  }, [userId]);
  return { list, error };
}

/**
 * The progress marks an incident already has: read from its timeline (so a reload remembers "en
 * route" and "on scene"), plus the marks still waiting in this phone's outbox.
 */
function useMarks(incident: MyIncident, queued: QueuedSignal[]): Record<string, boolean> {
  const [marks, setMarks] = useState<Record<string, boolean>>({});
  // An arrival or departure recorded from position while the card is open is read again at once.
  const [seenAt, setSeenAt] = useState(0);
  useEffect(
    () =>
      onIncidentEvent((e) => {
        const p = e.payload as { incident_id?: number; type?: string } | undefined;
        if (e.type === 'incident.timeline' && p?.incident_id === incident.Id && /^(on_scene|departed)/.test(p.type ?? '')) setSeenAt(Date.now());
      }),
    [incident.Id],
  );
  useEffect(() => {
    let stopped = false;
    get<{ events: { type: string; data: Record<string, unknown> }[] }>(`/v1/tickets/${incident.Id}/timeline`)
      .then(({ events }) => {
        if (stopped) return;
        const seen: Record<string, boolean> = {};
        for (const e of events) {
          if (e.type === 'en_route' || e.type === 'on_scene') seen[e.type] = true;
          // The latest arrival decides: one from position ("Arrived automatically") until undone.
          if (e.type === 'on_scene') seen.auto = e.data.source === 'position';
          // An undone arrival was no arrival: "On scene" can be tapped again.
          if (e.type === 'on_scene_undone') seen.auto = seen.on_scene = false;
        }
        setMarks(seen);
      })
      .catch(() => undefined); // offline: the outbox's marks below still show
    return () => void (stopped = true);
  }, [incident.Id, seenAt]);
  const path = `/v1/tickets/${incident.Id}/progress`;
  const waiting = { ...marks };
  for (const q of queued) if (q.target?.path === path && typeof q.target.payload?.state === 'string') waiting[q.target.payload.state] = true;
  return waiting;
}

function IncidentCard({ incident, act, linkNote, linkPhoto, fix, queued }: { incident: MyIncident; act: Act; linkNote: LinkNote; linkPhoto: LinkPhoto; fix: Fix | null; queued: QueuedSignal[] }) {
  const [done, setDone] = useState<Record<string, boolean>>({});
  const marks = useMarks(incident, queued);
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [confirmResolve, setConfirmResolve] = useState(false);
  const base = `/v1/tickets/${incident.Id}`;
  const run = async (key: string, target: NonNullable<QueuedSignal['target']>, withPosition = false) => {
    const err = await act(target, withPosition);
    setError(err);
    if (!err) setDone((d) => ({ ...d, [key]: true }));
  };
  const acked = Boolean(incident.acknowledged_at) || done.ack;
  const enRoute = done.en_route || marks.en_route;
  const onScene = done.on_scene || (marks.on_scene && !done.undo);
  const autoArrived = marks.auto && !done.undo;
  const undo = async () => {
    try {
      await post(`${base}/arrival/undo`);
      setDone((d) => ({ ...d, undo: true }));
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <li class={`my-incident priority-${incident.priority}`} data-testid="my-incident" data-id={incident.Id} id={`incident-${incident.Id}`}>
      <div class="row">
        <strong data-testid="my-incident-title">{incident.title}</strong>
        <span class="spacer" />
        <span class={`badge ${incident.priority === 'urgent' ? 'danger' : incident.priority === 'high' ? 'warn' : ''}`}>{incident.priority}</span>
      </div>
      {incident.description && incident.description !== incident.title && <p class="small">{incident.description}</p>}
      {incident.lat !== null && incident.lng !== null && (
        <p class="small">
          <a href={`https://www.openstreetmap.org/?mlat=${incident.lat}&mlon=${incident.lng}#map=17/${incident.lat}/${incident.lng}`} target="_blank" rel="noopener">
            {incident.location_name ?? `${incident.lat.toFixed(5)}, ${incident.lng.toFixed(5)}`}
          </a>
        </p>
      )}
      {error && <p class="field-error">{error}</p>}
      {autoArrived && (
        <p class="small" data-testid="my-auto-arrived">
          Arrived automatically (your position reached the incident).{' '}
          <button type="button" class="secondary" data-testid="my-auto-arrived-undo" onClick={() => void undo()}>
            Undo
          </button>
        </p>
      )}
      <div class="actions">
        <button type="button" data-testid="my-ack" disabled={acked} onClick={() => void run('ack', { method: 'POST', path: `${base}/acknowledge`, label: 'Acknowledge' })}>
          {acked ? 'Acknowledged' : 'Acknowledge'}
        </button>
        <button type="button" class="secondary" data-testid="my-en-route" disabled={enRoute} onClick={() => void run('en_route', { method: 'POST', path: `${base}/progress`, label: 'En route', payload: { state: 'en_route' } }, true)}>
          {enRoute ? 'En route ✓' : 'En route'}
        </button>
        <button type="button" class="secondary" data-testid="my-on-scene" disabled={onScene} onClick={() => void run('on_scene', { method: 'POST', path: `${base}/progress`, label: 'On scene', payload: { state: 'on_scene' } }, true)}>
          {onScene ? 'On scene ✓' : 'On scene'}
        </button>
        {!confirmResolve && (
          <button type="button" class="secondary" data-testid="my-resolve" disabled={done.resolve} onClick={() => setConfirmResolve(true)}>
            {done.resolve ? 'Resolved ✓' : 'Resolve…'}
          </button>
        )}
      </div>
      {confirmResolve && !done.resolve && (
        <div class="alert info resolve-confirm" role="group" aria-label="Resolve this incident?" data-testid="my-resolve-ask">
          <p class="small">Resolve “{incident.title}”? It leaves your list and the dispatcher sees it as resolved.</p>
          <div class="actions">
            <button type="button" class="secondary" data-testid="my-resolve-cancel" onClick={() => setConfirmResolve(false)}>
              Not yet
            </button>
            <button
              type="button"
              class="grow"
              data-testid="my-resolve-confirm"
              onClick={() => {
                setConfirmResolve(false);
                void run('resolve', { method: 'PATCH', path: base, label: 'Resolve', payload: { status: 'resolved' } });
              }}
            >
              Yes, resolve it
            </button>
          </div>
        </div>
      )}
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void linkNote(incident, note.trim()).then((err) => (err ? setError(err) : setNote('')));
        }}
      >
        <label for={`note-${incident.Id}`} class="visually-hidden">
          Note for this incident
        </label>
        <input id={`note-${incident.Id}`} data-testid="my-note" value={note} placeholder={fix ? 'Note (with your position)' : 'Note'} onInput={(e) => setNote(e.currentTarget.value)} />
        <button type="submit" class="secondary" disabled={!note.trim()}>
          Add
        </button>
      </form>
      <IncidentPhoto incident={incident} linkPhoto={linkPhoto} />
    </li>
  );
}

export function MyIncidentsPanel({ userId, act, linkNote, linkPhoto, fix, queued }: { userId: number; act: Act; linkNote: LinkNote; linkPhoto: LinkPhoto; fix: Fix | null; queued: QueuedSignal[] }) {
  const { list, error } = useMyIncidents(userId);
  return (
    <section class="card panel" aria-labelledby="my-incidents-title" data-testid="my-incidents">
      <div class="panel-head">
        <h2 id="my-incidents-title">My incidents</h2>
        <span class="spacer" />
        {list && <span class="badge">{list.length}</span>}
      </div>
      {error && <p class="muted small">{error}</p>}
      {list && list.length === 0 && <p class="muted small">Nothing assigned to you.</p>}
      <ul class="my-incidents">
        {(list ?? []).map((i) => (
          <IncidentCard key={i.Id} incident={i} act={act} linkNote={linkNote} linkPhoto={linkPhoto} fix={fix} queued={queued} />
        ))}
      </ul>
    </section>
  );
}
