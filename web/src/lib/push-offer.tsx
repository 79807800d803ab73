// "Turn on notifications", offered where people are (the first visit to /field and to the
// dashboard), not only in the dashboard's Settings: an alert reaches a member by push only once
// they have turned it on in a browser (otherwise by email). "Not now" hides it for 14 days on
// this browser; it is not offered where push is on, blocked or unsupported.
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './api';
import { enablePush, pushState, type PushState } from './push';

const KEY = 'muster-push-offer-later';
const LATER_MS = 14 * 24 * 3600_000;

function postponed(): boolean {
  try {
    return Date.now() - Number(localStorage.getItem(KEY) ?? 0) < LATER_MS;
  } catch {
    return false;
  }
}

export function PushOffer() {
  const [state, setState] = useState<PushState>('checking');
  const [later, setLater] = useState(postponed);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [turnedOn, setTurnedOn] = useState(false);
  useEffect(() => void pushState().then(setState), []);
  const enable = async () => {
    setBusy(true);
    setError(null);
    try {
      const next = await enablePush();
      setState(next);
      if (next === 'on') setTurnedOn(true);
      else if (next === 'denied') setError('Notifications are blocked for this site. Allow them in the browser’s site settings (the icon beside the address), then try again.');
      else setError('Notifications were not allowed. Alerts still reach you by email.');
    } catch (err) {
      setError(`Notifications could not be turned on: ${messageOf(err)}`);
    } finally {
      setBusy(false);
    }
  };
  if (turnedOn)
    return (
      <p class="alert success push-offer-done" role="status" data-testid="push-offer-done">
        Notifications are on for this device: pages, alerts and assignments will show here at once.
      </p>
    );
  if (later || (state !== 'off' && !(state === 'denied' && error))) return null;
  return (
    <section class="card push-offer" role="region" aria-label="Turn on notifications" data-testid="push-offer">
      <p class="push-offer-title">
        <strong>Turn on notifications</strong>
      </p>
      <p class="small">
        So you are told at once, even with Muster closed, when you are paged, someone in your organization sends an alert or an incident is assigned
        to you, and can acknowledge from the notification. Until you do, alerts reach you by email.
      </p>
      {error && (
        <p class="field-error" role="alert" data-testid="push-offer-error">
          {error}
        </p>
      )}
      <div class="row">
        <button type="button" data-testid="push-offer-enable" disabled={busy || state === 'denied'} onClick={() => void enable()}>
          {busy ? 'Turning on…' : 'Turn on notifications'}
        </button>
        <button
          type="button"
          class="secondary"
          data-testid="push-offer-later"
          onClick={() => {
            localStorage.setItem(KEY, String(Date.now()));
            setLater(true);
          }}
        >
          Not now
        </button>
      </div>
    </section>
  );
}
