// The field terminal at /field: beacon mode, photo capture, notes, check-ins and alerts for a
// phone, with an offline outbox. Installable (field.webmanifest, /sw.js caches this page's shell).
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, get } from '../lib/api';
import { PushOffer } from '../lib/push-offer';
import '../styles/base.css';
import './field.css';
import { Beacon, fixOf, type BeaconState } from './beacon';
import { deviceId } from './device';
import { MyIncidentsPanel, type Act } from './incidents';
import { OnCallPanel } from './oncall';
import { Pages } from './pages';
import { AlertPanel, BeaconPanel, Outbox, PhotoPanel, ReportPanel } from './panels';
import { queue, type QueueState } from './queue';
import type { Fix, Me, Org, SignalBody, SignalType } from './types';

const LOGIN = '/app/?next=/field';
const SESSION_KEY = 'muster-field-session';
const ORG_KEY = 'muster-field-org';
const FRESH_FIX_MS = 2 * 60_000;

interface Session {
  me: Me;
  orgs: Org[];
  /** Loaded from the last visit because the server could not be reached. */
  offline?: boolean;
}

/** Who is signed in: the server's answer, or (offline) the one remembered from the last visit. */
async function loadSession(): Promise<Session | 'signed_out'> {
  try {
    const [me, { orgs }] = await Promise.all([get<Me>('/v1/auth/me'), get<{ orgs: Org[] }>('/v1/orgs')]);
    const session = { me: { id: me.id, name: me.name, email: me.email }, orgs };
    localStorage.setItem(SESSION_KEY, JSON.stringify(session));
    return session;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      localStorage.removeItem(SESSION_KEY);
      return 'signed_out';
    }
    const saved = localStorage.getItem(SESSION_KEY);
    if (saved) return { ...(JSON.parse(saved) as Session), offline: true };
    throw err;
  }
}

/**
 * Where signals go when the person has not chosen: the org last used here or joined through an
 * invite link (both remembered under ORG_KEY), else a shared org (the newest joined first): never the
 * personal org while the person belongs to another, so a new worker's beacons reach the dispatcher.
 */
export function defaultOrg(usable: Org[], saved: number): Org | undefined {
  const remembered = usable.find((o) => o.id === saved);
  if (remembered) return remembered;
  const shared = usable.filter((o) => !o.personal);
  return shared.find((o) => o.primary) ?? shared[shared.length - 1] ?? usable.find((o) => o.primary) ?? usable[0];
}

let lastFix: Fix | null = null;

/** A recent position, or a fresh one if the phone can find it within 15 s; else none. */
function locate(): Promise<Fix | null> {
  if (lastFix && Date.now() - lastFix.at < FRESH_FIX_MS) return Promise.resolve(lastFix);
  if (!('geolocation' in navigator)) return Promise.resolve(null);
  return new Promise((resolve) =>
    navigator.geolocation.getCurrentPosition(
      (pos) => resolve((lastFix = fixOf(pos))),
      () => resolve(null),
      { enableHighAccuracy: true, maximumAge: 60_000, timeout: 15_000 },
    ),
  );
}

type InstallEvent = Event & { prompt(): Promise<void>; userChoice: Promise<{ outcome: string }> };

function useOnline(): boolean {
  const [online, setOnline] = useState(navigator.onLine);
  useEffect(() => {
    const on = () => setOnline(true);
    const off = () => setOnline(false);
    window.addEventListener('online', on);
    window.addEventListener('offline', off);
    return () => {
      window.removeEventListener('online', on);
      window.removeEventListener('offline', off);
    };
  }, []);
  return online;
}

function Terminal({ session }: { session: Session }) {
  const device = useMemo(deviceId, []);
  const usable = session.orgs.filter((o) => !o.locked);
  const [orgId, setOrgId] = useState<number | undefined>(() => {
    const saved = Number(localStorage.getItem(ORG_KEY));
    return defaultOrg(usable, saved)?.id;
  });
  const [fix, setFix] = useState<Fix | null>(null);
  const orgRef = useMemo(() => ({ id: orgId }), []);
  orgRef.id = orgId;
  const beacon = useMemo(
    () =>
      new Beacon(
        device,
        () => orgRef.id,
        (f) => {
          lastFix = f;
          setFix(f);
        },
      ),
    [],
  );
  const [bstate, setBstate] = useState<BeaconState>(beacon.state);
  const [qstate, setQstate] = useState<QueueState>(queue.state);
  const [flash, setFlash] = useState<{ text: string; id?: string; kind: 'info' | 'success' } | null>(null);
  const [install, setInstall] = useState<InstallEvent | null>(null);
  const online = useOnline();

  useEffect(() => beacon.subscribe(setBstate), []);
  useEffect(() => queue.subscribe(setQstate), []);
  useEffect(() => {
    if (Beacon.wasActive()) beacon.start();
    const onPrompt = (e: Event) => {
      e.preventDefault();
      setInstall(e as InstallEvent);
    };
    window.addEventListener('beforeinstallprompt', onPrompt);
    window.addEventListener('appinstalled', () => setInstall(null));
    return () => window.removeEventListener('beforeinstallprompt', onPrompt);
  }, []);
  // "Sent" once the item the flash is about has left the outbox without failing.
  useEffect(() => {
    if (!flash?.id) return;
    const item = qstate.items.find((i) => i.id === flash.id);
    if (!item) setFlash({ text: flash.text.replace(/ saved.*$/, ' sent.'), kind: 'success' });
    else if (item.status === 'failed') setFlash(null);
  }, [qstate, flash]);
  useEffect(() => {
    if (flash?.kind !== 'success') return;
    const t = setTimeout(() => setFlash(null), 5000);
    return () => clearTimeout(t);
  }, [flash]);

  /** An incident action through the outbox; "en route" and "on scene" carry the phone's position. */
  const act: Act = async (target, withPosition = false) => {
    const where = withPosition ? await locate() : null;
    const payload = where ? { ...target.payload, lat: where.lat, lng: where.lng, accuracy: Math.round(where.accuracy * 10) / 10 } : target.payload;
    try {
      const item = await queue.add({ type: 'note' }, undefined, { ...target, ...(payload ? { payload } : {}) });
      setFlash({ id: item.id, kind: 'info', text: navigator.onLine ? `${target.label} saved, sending…` : `${target.label} saved on this phone; it will be sent when you are back online.` });
      return null;
    } catch (err) {
      return `Could not save it on this phone: ${err instanceof Error ? err.message : String(err)}`;
    }
  };

  const send = async (type: SignalType, note: string, photo?: Blob, incident?: { Id: number; org_id: number }): Promise<string | null> => {
    const where = await locate();
    const body: SignalBody = { type, meta: { device_id: device } };
    // A note about an incident goes to the incident's org, whichever org the terminal sends to.
    if (incident) Object.assign(body, { ticket_id: incident.Id, org_id: incident.org_id });
    else if (orgId) body.org_id = orgId;
    if (note) body.note = note;
    if (where) Object.assign(body, { lat: where.lat, lng: where.lng, accuracy: Math.round(where.accuracy * 10) / 10 });
    try {
      const item = await queue.add(body, photo);
      const what = { alert: 'Alert', note: 'Note', checkin: 'Check-in', capture: 'Photo', beacon: 'Beacon' }[type] + (incident ? ' for the incident' : '');
      setFlash({
        id: item.id,
        kind: 'info',
        text: navigator.onLine ? `${what} saved, sending…` : `${what} saved on this phone; it will be sent when you are back online.`,
      });
      return null;
    } catch (err) {
      return `Could not save it on this phone: ${err instanceof Error ? err.message : String(err)}`;
    }
  };

  const waiting = qstate.items.filter((i) => i.status === 'waiting').length;
  const failed = qstate.items.length - waiting;
  const org = usable.find((o) => o.id === orgId);
  return (
    <div class="field-app">
      <header class="topbar">
        <div class="topbar-inner">
          <h1 class="brand">
            <img src="/icon.svg" alt="" width={28} height={28} />
            <span>Muster field</span>
          </h1>
          <span class="spacer" />
          <span class={`conn ${online ? 'online' : 'offline'}`} data-testid="connection">
            <span class="conn-dot" aria-hidden="true" />
            {online ? 'Online' : 'Offline'}
          </span>
        </div>
      </header>
      <main class="column">
        <div class="who">
          <div class="who-text">
            <strong data-testid="user-name">{session.me.name}</strong>
            {usable.length <= 1 && (
              <span class="muted small" data-testid="org-name">
                Sending to {org ? `${org.name}${org.personal ? ' (personal)' : ''}` : 'no organisation'}
              </span>
            )}
            {usable.length > 1 && <span class="muted small">Sending to</span>}
          </div>
          {usable.length > 1 && (
            <div class="org-pick">
              <label for="org" class="visually-hidden">
                Organisation
              </label>
              <select
                id="org"
                data-testid="org-select"
                value={orgId}
                disabled={bstate.active}
                title={bstate.active ? 'Stop the beacon to change organisation' : undefined}
                onChange={(e) => {
                  const id = Number(e.currentTarget.value);
                  setOrgId(id);
                  localStorage.setItem(ORG_KEY, String(id));
                }}
              >
                {usable.map((o) => (
                  <option key={o.id} value={o.id}>
                    {o.name}
                  </option>
                ))}
              </select>
            </div>
          )}
        </div>
        {session.offline && <p class="alert info small">Offline: showing the account from your last visit.</p>}
        {(waiting > 0 || failed > 0) && (
          <p class={`pending ${failed ? 'has-failed' : ''}`} data-testid="queue-count" data-count={waiting} role="status">
            {waiting > 0 && `${waiting} waiting to send`}
            {waiting > 0 && failed > 0 && ' · '}
            {failed > 0 && `${failed} failed`}
          </p>
        )}
        {flash && (
          <p class={`alert ${flash.kind} flash`} role="status" data-testid="flash">
            {flash.text}
          </p>
        )}
        {!session.offline && <Pages userId={session.me.id} act={act} />}
        {!session.offline && <OnCallPanel />}
        <PushOffer />
        <MyIncidentsPanel userId={session.me.id} act={act} linkNote={(incident, note) => send('note', note, undefined, incident)}
          linkPhoto={(incident, photo, caption) => send('capture', caption, photo, incident)}
          fix={fix}
          queued={qstate.items}
        />
        <BeaconPanel beacon={beacon} state={bstate} orgName={org ? `${org.name}${org.personal ? ' (your personal org)' : ''}` : null} />
        <AlertPanel send={send} orgId={orgId} orgName={org ? org.name : null} />
        <PhotoPanel send={send} progress={qstate.progress} />
        <ReportPanel send={send} fix={fix} />
        <Outbox state={qstate} onSendNow={() => void queue.flush()} onDiscard={(id) => void queue.discard(id)} onRetry={(id) => void queue.retry(id)} />
        <footer class="foot muted small">
          {install && (
            <button
              type="button"
              class="secondary block"
              data-testid="install"
              onClick={() => {
                void install.prompt();
                setInstall(null);
              }}
            >
              Install the field terminal on this phone
            </button>
          )}
          <p>
            Device <code data-testid="device-id">{device}</code>
          </p>
          <p>
            <a href="/app/">Open the dashboard</a>
          </p>
        </footer>
      </main>
    </div>
  );
}

function Boot() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    loadSession()
      .then((s) => {
        if (s === 'signed_out') return location.assign(LOGIN);
        setSession(s);
        // Another account signed in meanwhile (e.g. in another tab): show it, with its orgs.
        queue.onAccountChange = () => location.reload();
        void queue.start(s.me.id);
      })
      .catch(() => setError('Cannot reach Muster. Check your connection and reload.'));
  }, []);
  if (error)
    return (
      <main class="center">
        <div class="card stack" role="alert">
          <h1>Muster field</h1>
          <p>{error}</p>
          <button type="button" onClick={() => location.reload()}>
            Reload
          </button>
        </div>
      </main>
    );
  if (!session)
    return (
      <main class="center" aria-busy="true">
        <p class="muted">Loading…</p>
      </main>
    );
  return <Terminal session={session} />;
}

if ('serviceWorker' in navigator) {
  window.addEventListener('load', () => void navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch(() => undefined));
}

render(<Boot />, document.getElementById('root')!);
