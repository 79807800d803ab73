// Settings → Calendars: connect ICS feeds and CalDAV accounts whose events count as busy time,
// pick calendars, see each one's sync status and the busy times they add to the coming week.
import { useState } from 'preact/hooks';
import { del, get, patch, post, qs } from '../../lib/api';
import { formatDateTime } from '../../lib/format';
import { ErrorAlert, FieldError, Loading, useAsync } from '../ui';

interface Connection {
  id: number;
  kind: 'ics' | 'caldav';
  name: string;
  url: string;
  status: 'pending' | 'ok' | 'error';
  error: string | null;
  warning: string | null;
  last_synced_at: string | null;
  busy_count: number;
  calendars: { url: string; name: string; busy: boolean; write: boolean }[];
}
interface Busy {
  calendar_id: number;
  start_time: string;
  end_time: string;
}

const DAY = 86_400_000;

export function CalendarsCard() {
  const list = useAsync(() => get<{ calendars: Connection[] }>('/v1/calendars').then((r) => r.calendars), []);
  const week = useAsync(() => {
    const from = new Date(Math.floor(Date.now() / DAY) * DAY);
    return get<{ busy: Busy[] }>(`/v1/calendars/busy${qs({ from: from.toISOString(), to: new Date(from.getTime() + 7 * DAY).toISOString() })}`).then((r) => r.busy);
  }, []);
  const [error, setError] = useState<unknown>(null);
  const reload = () => {
    list.reload();
    week.reload();
  };
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card stack" data-testid="calendars">
      <h2>Calendars</h2>
      <p class="muted">Events in these calendars count as busy: no one can book you then. Bookings can be written to a CalDAV calendar.</p>
      <ErrorAlert error={list.error ?? error} />
      {list.loading && !list.data ? <Loading /> : null}
      {(list.data ?? []).map((c) => (
        <ConnectionRow key={c.id} c={c} act={act} />
      ))}
      <AddCalendar onAdded={reload} />
      <h3>Busy from your calendars, next 7 days</h3>
      {week.data && week.data.length === 0 ? <p class="muted">Nothing.</p> : null}
      <ul class="stack">
        {(week.data ?? []).slice(0, 50).map((b) => (
          <li key={`${b.calendar_id}-${b.start_time}`}>
            {formatDateTime(b.start_time)} – {formatDateTime(b.end_time)} · {(list.data ?? []).find((c) => c.id === b.calendar_id)?.name ?? ''}
          </li>
        ))}
      </ul>
    </div>
  );
}

function ConnectionRow({ c, act }: { c: Connection; act: (fn: () => Promise<unknown>) => Promise<void> }) {
  const [busy, setBusy] = useState(() => c.calendars.filter((x) => x.busy).map((x) => x.url));
  const [write, setWrite] = useState(() => c.calendars.find((x) => x.write)?.url ?? '');
  const toggle = (url: string) => setBusy((b) => (b.includes(url) ? b.filter((u) => u !== url) : [...b, url]));
  return (
    <div class="stack" data-testid={`calendar-${c.id}`}>
      <div class="row">
        <strong>{c.name}</strong>
        <span class="muted">{c.kind === 'ics' ? 'ICS feed' : 'CalDAV'}</span>
        <span class={`badge ${c.status === 'ok' ? 'ok' : c.status === 'error' ? 'danger' : 'warn'}`}>{c.status}</span>
        <span class="muted">
          {c.busy_count} busy · {c.last_synced_at ? `synced ${formatDateTime(c.last_synced_at)}` : 'not synced yet'}
        </span>
      </div>
      {c.warning ? <div class="alert info">{c.warning}</div> : null}
      {c.error ? <div class="alert error">{c.error}</div> : null}
      {c.kind === 'caldav' && c.calendars.length > 0 ? (
        <div class="stack">
          {c.calendars.map((x) => (
            <label key={x.url} class="row">
              <input type="checkbox" checked={busy.includes(x.url)} onChange={() => toggle(x.url)} /> {x.name} counts as busy
              <input type="radio" name={`write-${c.id}`} checked={write === x.url} onChange={() => setWrite(x.url)} /> receives bookings
            </label>
          ))}
          <label class="row">
            <input type="radio" name={`write-${c.id}`} checked={write === ''} onChange={() => setWrite('')} /> write bookings nowhere
          </label>
          <div>
            <button type="button" class="small" onClick={() => void act(() => patch(`/v1/calendars/${c.id}`, { busy_calendars: busy, write_calendar: write || null }))}>
              Save choice
            </button>
          </div>
        </div>
      ) : null}
      <div class="row">
        <button type="button" class="secondary small" onClick={() => void act(() => post(`/v1/calendars/${c.id}/sync`))}>
          Sync now
        </button>
        <button type="button" class="secondary small" onClick={() => void (confirm(`Disconnect ${c.name}?`) && act(() => del(`/v1/calendars/${c.id}`)))}>
          Disconnect
        </button>
      </div>
    </div>
  );
}

function AddCalendar({ onAdded }: { onAdded: () => void }) {
  const [kind, setKind] = useState<'ics' | 'caldav'>('ics');
  const [url, setUrl] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaving(true);
    try {
      await post('/v1/calendars', { kind, url: url.trim(), ...(kind === 'caldav' && username ? { username, password } : {}) });
      setUrl('');
      setPassword('');
      onAdded();
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };
  return (
    <form class="stack" onSubmit={(e) => void submit(e)}>
      <ErrorAlert error={error} />
      <div class="grid-2">
        <div class="field">
          <label for="cal-kind">Kind</label>
          <select id="cal-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as 'ics' | 'caldav')}>
            <option value="ics">ICS address (Google secret address, Outlook published calendar)</option>
            <option value="caldav">CalDAV account (iCloud, Fastmail, Nextcloud)</option>
          </select>
        </div>
        <div class="field">
          <label for="cal-url">{kind === 'ics' ? 'Feed address' : 'Server address'}</label>
          <input id="cal-url" value={url} placeholder={kind === 'ics' ? 'https://…/basic.ics' : 'https://caldav.fastmail.com'} onInput={(e) => setUrl(e.currentTarget.value)} />
          <FieldError error={error} name="url" />
        </div>
      </div>
      {kind === 'caldav' ? (
        <div class="grid-2">
          <div class="field">
            <label for="cal-user">Username</label>
            <input id="cal-user" value={username} autocomplete="off" onInput={(e) => setUsername(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="cal-pass">App password</label>
            <input id="cal-pass" type="password" value={password} autocomplete="new-password" onInput={(e) => setPassword(e.currentTarget.value)} />
          </div>
        </div>
      ) : null}
      <div>
        <button type="submit" disabled={saving || !url.trim()}>
          {saving ? 'Connecting…' : 'Connect calendar'}
        </button>
      </div>
    </form>
  );
}
