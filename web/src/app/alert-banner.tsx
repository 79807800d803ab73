// On every dashboard page: a banner when an alert or an urgent incident is opened anywhere in the
// user's orgs (and, if the user turned it on, a short tone). It shares the incident stream with the
// incident views, so it costs no extra connection there.
import { useState } from 'preact/hooks';
import { useStream } from './sse';
import type { Incident } from './types';
import { sourceLabel } from './ui';

const SOUND_KEY = 'muster-alert-sound';

function beep(): void {
  try {
    const ctx = new AudioContext();
    const osc = ctx.createOscillator();
    osc.frequency.value = 880;
    osc.connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + 0.25);
  } catch {
    // no audio (autoplay policy, no device): the banner is enough
  }
}

export function AlertBanner() {
  const [shown, setShown] = useState<Incident[]>([]);
  const [sound, setSound] = useState(() => localStorage.getItem(SOUND_KEY) === 'on');
  useStream('/v1/incidents/stream', (e) => {
    if (e.type !== 'incident.created') return;
    const i = e.payload as Incident;
    if (i.source !== 'alert' && i.priority !== 'urgent') return;
    setShown((list) => [i, ...list.filter((x) => x.Id !== i.Id)].slice(0, 3));
    if (localStorage.getItem(SOUND_KEY) === 'on') beep();
  });
  if (shown.length === 0) return null;
  return (
    <div class="alert-banner" role="alert" data-testid="alert-banner">
      {shown.map((i) => (
        <div key={i.Id} class="row">
          <strong>{i.integration ? sourceLabel(i) : i.source === 'alert' ? 'Field alert' : 'Urgent incident'}:</strong>
          <a href={`/app/incidents/${i.Id}`}>{i.title}</a>
          <span class="spacer" />
          <button type="button" class="ghost small" onClick={() => setShown((l) => l.filter((x) => x.Id !== i.Id))}>
            Dismiss
          </button>
        </div>
      ))}
      <label class="check small">
        <input
          type="checkbox"
          checked={sound}
          onChange={(e) => {
            const on = e.currentTarget.checked;
            setSound(on);
            localStorage.setItem(SOUND_KEY, on ? 'on' : 'off');
          }}
        />
        Play a sound for the next ones
      </label>
    </div>
  );
}
