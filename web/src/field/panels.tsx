// The field terminal's panels: beacon, alert, note/check-in, photo and the outbox.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../lib/api';
import type { Beacon, BeaconState } from './beacon';
import { resizePhoto, type Resized } from './photo';
import type { QueueState, QueuedSignal } from './queue';
import type { Fix, SignalType } from './types';

const CameraIcon = () => (
  <svg width="22" height="22" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
    <path d="M4 7h3l2-3h6l2 3h3a1 1 0 0 1 1 1v11a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V8a1 1 0 0 1 1-1z" />
    <circle cx="12" cy="13" r="4" />
  </svg>
);
const WarnIcon = () => (
  <svg width="24" height="24" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
    <path d="M12 3 2 20h20L12 3z" />
    <path d="M12 10v4M12 17.5v.01" />
  </svg>
);

const clock = (ms: number) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function since(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ago` : `${Math.floor(m / 60)} h ${m % 60} min ago`;
}

/** Re-renders every second while `on`, for "12 s ago" labels. */
function useNow(on: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!on) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [on]);
  return now;
}

export function BeaconPanel({ beacon, state, orgName }: { beacon: Beacon; state: BeaconState; orgName: string | null }) {
  const now = useNow(state.active);
  const on = state.active;
  return (
    <section class={`card panel beacon ${on ? 'is-on' : ''}`} aria-labelledby="beacon-title" data-testid="beacon-panel">
      <div class="panel-head">
        <span class={`dot ${on ? 'live' : ''}`} aria-hidden="true" />
        <div>
          <h2 id="beacon-title">Beacon {on ? 'on' : 'off'}</h2>
          <p class="muted small" data-testid="beacon-status" data-state={on ? 'on' : 'off'}>
            {state.stopping
              ? 'Stopping…'
              : on
                ? state.sent
                  ? 'Sharing your position every 30 seconds.'
                  : state.fix
                    ? 'Position found, sending…'
                    : 'Waiting for a position fix…'
                : 'Share your live position with your team.'}
          </p>
          <p class="small beacon-org" data-testid="beacon-org">
            {orgName ? (
              <>
                {on ? 'Received by ' : 'Goes to '}
                <strong>{orgName}</strong>
              </>
            ) : (
              'No organisation can receive it'
            )}
          </p>
        </div>
      </div>
      {on && (
        <dl class="facts">
          <div>
            <dt>Since</dt>
            <dd>{state.since ? clock(state.since) : '–'}</dd>
          </div>
          <div>
            <dt>Last sent</dt>
            <dd data-testid="beacon-last-sent">{state.lastSent ? since(state.lastSent, now) : 'not yet'}</dd>
          </div>
          <div>
            <dt>Accuracy</dt>
            <dd>{state.fix ? `± ${Math.round(state.fix.accuracy)} m` : '–'}</dd>
          </div>
          <div>
            <dt>Screen</dt>
            <dd>{state.wakeLock === 'held' ? 'kept awake' : 'may sleep'}</dd>
          </div>
        </dl>
      )}
      {state.error && (
        <p class="alert error" role="alert" data-testid="beacon-error">
          {state.error}
        </p>
      )}
      {state.denied && (
        <div class="alert info help">
          <strong>Allow location to use the beacon.</strong> Tap the lock or settings icon next to the address, set Location to
          “Allow”, then start again. On iPhone: Settings › Privacy › Location Services › your browser › “While Using”.
        </div>
      )}
      {on && state.wakeLock !== 'held' && !state.error && (
        <p class="muted small">Keep this page open: {state.wakeLock === 'unsupported' ? 'this browser cannot keep the screen on' : 'the screen may turn off'}, and a locked phone pauses the beacon.</p>
      )}
      <button
        type="button"
        class={`big block ${on ? 'secondary' : ''}`}
        data-testid="beacon-toggle"
        disabled={state.stopping}
        onClick={() => (on ? void beacon.stop() : beacon.start())}
      >
        {on ? 'Stop beacon' : 'Start beacon'}
      </button>
    </section>
  );
}

type Send = (type: SignalType, note: string, photo?: Blob) => Promise<string | null>;

interface Reach {
  org_id: number;
  org_name: string;
  livemode: boolean;
  members: number;
  by_push: number;
  by_email: number;
  you: 'push' | 'email';
}

const people = (n: number) => (n === 1 ? '1 person' : `${n} people`);

/** Who the alert will reach, as the server will send it (GET /v1/signals/alert-reach): said before it is sent. */
function useReach(orgId: number | undefined, open: boolean): { reach: Reach | null; failed: boolean } {
  const [reach, setReach] = useState<Reach | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (!open) return;
    let stopped = false;
    setFailed(false);
    get<Reach>(`/v1/signals/alert-reach${orgId ? `?org_id=${orgId}` : ''}`)
      .then((r) => !stopped && setReach(r))
      .catch(() => !stopped && setFailed(true));
    return () => void (stopped = true);
  }, [orgId, open]);
  return { reach: reach && (orgId === undefined || reach.org_id === orgId) ? reach : null, failed };
}

/** "Tells all 5 members of Rescue North: 2 by notification, 3 by email." in the words a responder needs. */
function ReachText({ reach, failed, orgName }: { reach: Reach | null; failed: boolean; orgName: string | null }) {
  if (failed || !reach)
    return (
      <p class="small" data-testid="alert-reach" data-state={failed ? 'unknown' : 'loading'}>
        {failed
          ? `Cannot check who is reachable now. When it is sent, every member of ${orgName ?? 'your organisation'} is told by notification, or by email if they have not turned notifications on.`
          : 'Checking who will be told…'}
      </p>
    );
  if (!reach.livemode)
    return (
      <p class="small" data-testid="alert-reach" data-state="test">
        Test mode: the alert is recorded, but nobody is notified.
      </p>
    );
  const others = reach.members - 1;
  const how = [reach.by_push ? `${reach.by_push} by notification` : '', reach.by_email ? `${reach.by_email} by email` : ''].filter(Boolean).join(', ');
  return (
    <p class="small" data-testid="alert-reach" data-state="known" data-members={reach.members} data-push={reach.by_push} data-email={reach.by_email}>
      {others === 0 ? (
        <>
          You are the only member of <strong>{reach.org_name}</strong>: nobody else will be told.
        </>
      ) : (
        <>
          All {people(reach.members)} in <strong>{reach.org_name}</strong>, you included, will be told: {how}.
          {reach.by_email > 0 && ' Those without notifications turned on get an email, which may be read later.'}
        </>
      )}
    </p>
  );
}

export function AlertPanel({ send, orgId, orgName }: { send: Send; orgId: number | undefined; orgName: string | null }) {
  const [open, setOpen] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const { reach, failed } = useReach(orgId, open);
  useEffect(() => {
    if (open) area.current?.focus();
  }, [open]);
  const reset = () => {
    setOpen(false);
    setConfirming(false);
    setNote('');
    setError(null);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!note.trim()) {
      setError('Say what is happening: an alert needs a note.');
      area.current?.focus();
      return;
    }
    if (!confirming) return setConfirming(true);
    setBusy(true);
    const err = await send('alert', note.trim());
    setBusy(false);
    if (err) return setError(err);
    reset();
  };
  if (!open)
    return (
      <section class="panel alert-panel" aria-label="Alert">
        <button type="button" class="big block danger sos" data-testid="alert-open" onClick={() => setOpen(true)}>
          <WarnIcon /> Send alert
        </button>
        <p class="muted small center-text">Tells every member of {orgName ?? 'your organisation'}, by notification or email.</p>
      </section>
    );
  return (
    <section class="card panel alert-panel is-open" aria-labelledby="alert-title">
      <form onSubmit={(e) => void submit(e)} noValidate>
        <h2 id="alert-title" class="danger-text">
          Send an alert
        </h2>
        <ReachText reach={reach} failed={failed} orgName={orgName} />
        <div class="field">
          <label for="alert-note">What is happening? (required)</label>
          <textarea
            id="alert-note"
            ref={area}
            data-testid="alert-note"
            value={note}
            maxLength={5000}
            aria-invalid={!!error}
            aria-describedby={error ? 'alert-error' : undefined}
            onInput={(e) => {
              setNote(e.currentTarget.value);
              setError(null);
              setConfirming(false);
            }}
          />
          {error && (
            <p id="alert-error" class="field-error" role="alert">
              {error}
            </p>
          )}
        </div>
        {confirming && (
          <p class="alert error confirm" role="alert" data-testid="alert-confirm-text">
            {reach && reach.livemode
              ? reach.members > 1
                ? `${people(reach.members)} in ${reach.org_name} will be notified now. Send it?`
                : `Nobody else is in ${reach.org_name}. Send it anyway?`
              : `Everyone in ${orgName ?? 'your organisation'} will be notified. Send it?`}
          </p>
        )}
        <div class="actions">
          <button type="button" class="secondary" onClick={reset}>
            Cancel
          </button>
          <button type="submit" class="danger grow" data-testid={confirming ? 'alert-confirm' : 'alert-submit'} disabled={busy}>
            {confirming ? 'Yes, send alert' : 'Send alert…'}
          </button>
        </div>
      </form>
    </section>
  );
}

export function ReportPanel({ send, fix }: { send: Send; fix: Fix | null }) {
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<SignalType | null>(null);
  const go = async (type: 'note' | 'checkin') => {
    if (type === 'note' && !note.trim()) return setError('Write the note first.');
    setBusy(type);
    const err = await send(type, note.trim());
    setBusy(null);
    if (err) return setError(err);
    setNote('');
    setError(null);
  };
  return (
    <section class="card panel" aria-labelledby="report-title">
      <h2 id="report-title">Note or check-in</h2>
      <div class="field">
        <label for="report-note">Note</label>
        <textarea
          id="report-note"
          data-testid="note-text"
          placeholder="What you see, where you are…"
          value={note}
          maxLength={5000}
          aria-invalid={!!error}
          onInput={(e) => {
            setNote(e.currentTarget.value);
            setError(null);
          }}
        />
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
      </div>
      <p class="muted small">{fix ? `Your position (± ${Math.round(fix.accuracy)} m) is attached.` : 'Your position is attached when the phone can find it.'}</p>
      <div class="actions">
        <button type="button" class="secondary grow" data-testid="checkin-send" disabled={busy !== null} onClick={() => void go('checkin')}>
          {busy === 'checkin' ? 'Checking in…' : 'Check in here'}
        </button>
        <button type="button" class="grow" data-testid="note-send" disabled={busy !== null} onClick={() => void go('note')}>
          {busy === 'note' ? 'Saving…' : 'Send note'}
        </button>
      </div>
    </section>
  );
}

export function PhotoPanel({ send, progress }: { send: Send; progress: number | null }) {
  const [photo, setPhoto] = useState<(Resized & { url: string; name: string }) | null>(null);
  const [caption, setCaption] = useState('');
  const [status, setStatus] = useState<'idle' | 'resizing' | 'sending'>('idle');
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => () => photo && URL.revokeObjectURL(photo.url), [photo]);

  const choose = async (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0];
    if (!file) return;
    setError(null);
    setStatus('resizing');
    try {
      const resized = await resizePhoto(file);
      setPhoto({ ...resized, url: URL.createObjectURL(resized.blob), name: file.name });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setStatus('idle');
      if (input.current) input.current.value = '';
    }
  };
  const submit = async () => {
    if (!photo) return;
    setStatus('sending');
    const err = await send('capture', caption.trim(), photo.blob);
    setStatus('idle');
    if (err) return setError(err);
    setPhoto(null);
    setCaption('');
  };
  return (
    <section class="card panel" aria-labelledby="photo-title">
      <h2 id="photo-title">Photo</h2>
      <input
        ref={input}
        id="photo-input"
        class="visually-hidden"
        type="file"
        accept="image/*"
        capture="environment"
        data-testid="photo-input"
        aria-label="Take or choose a photo"
        onChange={(e) => void choose(e)}
      />
      {!photo && (
        <label for="photo-input" class="button big block secondary" data-testid="photo-take" aria-busy={status === 'resizing'}>
          {status === 'resizing' ? (
            'Preparing photo…'
          ) : (
            <>
              <CameraIcon /> Take or choose a photo
            </>
          )}
        </label>
      )}
      {photo && (
        <div class="photo-preview">
          <img src={photo.url} alt="The photo to send" data-testid="photo-thumb" />
          <p class="muted small">
            {photo.width} × {photo.height} px, {Math.max(1, Math.round(photo.blob.size / 1024))} KB
          </p>
          <div class="field">
            <label for="photo-caption">Caption (optional)</label>
            <input id="photo-caption" value={caption} maxLength={5000} onInput={(e) => setCaption(e.currentTarget.value)} />
          </div>
          <div class="actions">
            <button type="button" class="secondary" onClick={() => setPhoto(null)} disabled={status === 'sending'}>
              Discard
            </button>
            <button type="button" class="grow" data-testid="photo-send" onClick={() => void submit()} disabled={status === 'sending'}>
              {status === 'sending' ? 'Saving…' : 'Send photo'}
            </button>
          </div>
        </div>
      )}
      {progress !== null && (
        <div class="progress" role="progressbar" aria-label="Uploading photo" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(progress * 100)}>
          <span style={{ width: `${Math.round(progress * 100)}%` }} />
        </div>
      )}
      {error && (
        <p class="alert error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

const LABEL: Record<SignalType, string> = { alert: 'Alert', note: 'Note', checkin: 'Check-in', capture: 'Photo', beacon: 'Beacon' };

export function Outbox({ state, onSendNow, onDiscard, onRetry }: { state: QueueState; onSendNow: () => void; onDiscard: (id: string) => void; onRetry: (id: string) => void }) {
  if (state.items.length === 0) return null;
  const waiting = state.items.filter((i) => i.status === 'waiting').length;
  return (
    <section class="card panel outbox" aria-labelledby="outbox-title" data-testid="outbox">
      <div class="panel-head">
        <h2 id="outbox-title">Outbox</h2>
        <span class="spacer" />
        {waiting > 0 && (
          <button type="button" class="secondary small-button" data-testid="queue-send-now" disabled={state.sending !== null} onClick={onSendNow}>
            Send now
          </button>
        )}
      </div>
      {state.blocked && (
        <p class="muted small" data-testid="queue-blocked">
          {state.blocked}
        </p>
      )}
      {state.signedOut && (
        <p class="alert error">
          Your session ended. <a href="/app/?next=/field">Sign in again</a> and the outbox will be sent.
        </p>
      )}
      <ul class="queue">
        {state.items.map((item) => (
          <QueueRow key={item.id} item={item} sending={state.sending === item.id} onDiscard={onDiscard} onRetry={onRetry} />
        ))}
      </ul>
    </section>
  );
}

function QueueRow({ item, sending, onDiscard, onRetry }: { item: QueuedSignal; sending: boolean; onDiscard: (id: string) => void; onRetry: (id: string) => void }) {
  const status = sending ? 'sending' : item.status;
  return (
    <li class={`queue-item ${item.status}`} data-testid="queue-item" data-status={status} data-type={item.body.type}>
      <div class="row">
        <strong>{item.target?.label ?? LABEL[item.body.type]}</strong>
        <span class="muted small">{clock(Date.parse(item.created_at))}</span>
        <span class="spacer" />
        <span class={`badge ${status === 'failed' ? 'danger' : status === 'sending' ? 'brand' : 'warn'}`}>{status === 'waiting' ? 'waiting' : status}</span>
      </div>
      {item.body.note && <p class="queue-note">{item.body.note}</p>}
      {item.status === 'failed' && (
        <>
          <p class="field-error">{item.error}</p>
          <div class="actions">
            <button type="button" class="secondary small-button" onClick={() => onRetry(item.id)}>
              Try again
            </button>
            <button type="button" class="ghost small-button danger-text" onClick={() => onDiscard(item.id)}>
              Discard
            </button>
          </div>
        </>
      )}
    </li>
  );
}
