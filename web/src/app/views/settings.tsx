// Settings: profile, how you are paged (notification rules, phone), API keys (the secret shown once),
// push notifications on this browser, calendar feed.
import { useEffect, useState } from 'preact/hooks';
import { TimeZoneInput } from '../timezone-input';
import { del, get, patch, post } from '../../lib/api';
import { disablePush, enablePush, pushState, type PushState } from '../../lib/push';
import { formatDateTime } from '../../lib/format';
import { useSession } from '../session';
import type { ApiKey, Me } from '../types';
import { CopyButton, ErrorAlert, errorsOf, FieldError, Loading, PageHeader, useAsync } from '../ui';
import { CalendarsCard } from './calendars';
import { PagingSettings } from './paging-settings';

export function SettingsView() {
  return (
    <section class="view">
      <PageHeader title="Settings" />
      <div class="settings-grid">
        <Profile />
        <Push />
        <PagingSettings />
        <ApiKeys />
        <Calendar />
        <CalendarsCard />
      </div>
    </section>
  );
}

function Profile() {
  const { me } = useSession();
  const [name, setName] = useState(me.name);
  const [timezone, setTimezone] = useState(me.timezone);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    try {
      const r = await patch<Me>('/v1/auth/me', { name, timezone });
      Object.assign(me, r);
      setSaved(true);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="card stack" onSubmit={(e) => void submit(e)}>
      <h2>Profile</h2>
      <p class="muted">
        Signed in as {me.email} · plan <strong>{me.plan}</strong>
      </p>
      {saved ? (
        <div class="alert success" role="status" data-testid="profile-saved">
          Profile saved.
        </div>
      ) : null}
      <ErrorAlert error={error} />
      <div class="field">
        <label for="p-name">Name</label>
        <input id="p-name" name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <FieldError error={error} name="name" />
      </div>
      <div class="field">
        <label for="p-tz">Time zone</label>
        <TimeZoneInput id="p-tz" name="timezone" value={timezone} onInput={setTimezone} serverSaid={!!errorsOf(error)?.fields.timezone} />
        <FieldError error={error} name="timezone" />
      </div>
      <div class="row">
        <button type="submit">Save profile</button>
      </div>
    </form>
  );
}

function ApiKeys() {
  const keys = useAsync(() => get<{ api_keys: ApiKey[] }>('/v1/api-keys').then((r) => r.api_keys), []);
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'live' | 'test'>('live');
  const [created, setCreated] = useState<ApiKey | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const k = await post<ApiKey>('/v1/api-keys', { name, mode });
      setCreated(k);
      setName('');
      keys.setData((l) => [{ ...k, key: undefined }, ...(l ?? [])]);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (k: ApiKey) => {
    if (!confirm(`Revoke "${k.name}" (${k.redacted})? Anything using it stops working at once.`)) return;
    setError(null);
    try {
      await del(`/v1/api-keys/${k.id}`);
      keys.setData((l) => l?.filter((x) => x.id !== k.id));
      if (created?.id === k.id) setCreated(null);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card stack span-2" data-testid="api-keys">
      <h2>API keys</h2>
      <p class="muted">
        For servers and scripts: send as <code>x-api-key</code>. Test keys (<code>sk_test_</code>) see only test data. Never put a key in a web page.
      </p>
      {created?.key ? (
        <div class="alert success stack" role="status" data-testid="new-key">
          <strong>Copy your new key now. It will not be shown again.</strong>
          <div class="link-box">
            <code class="secret" data-testid="new-key-secret">
              {created.key}
            </code>
            <CopyButton text={created.key} />
          </div>
          <div>
            <button type="button" class="secondary small" onClick={() => setCreated(null)}>
              I have saved it
            </button>
          </div>
        </div>
      ) : null}
      <ErrorAlert error={error} />
      <form class="row nowrap-lg" onSubmit={(e) => void create(e)}>
        <div class="field grow">
          <label for="k-name">Key name</label>
          <input id="k-name" required maxLength={100} placeholder="e.g. CI pipeline" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <FieldError error={error} name="name" />
        </div>
        <div class="field">
          <label for="k-mode">Mode</label>
          <select id="k-mode" data-testid="key-mode" aria-describedby="k-mode-help" value={mode} onChange={(e) => setMode(e.currentTarget.value as 'live' | 'test')}>
            <option value="live">Live</option>
            <option value="test">Test (isolated data)</option>
          </select>
          <small id="k-mode-help">{mode === 'test' ? 'Test records appear only with “View test data” on.' : 'Records appear on the dashboard.'}</small>
        </div>
        <button type="submit" class="align-end" disabled={busy}>
          Create key
        </button>
      </form>
      {keys.loading && !keys.data ? <Loading label="Loading keys" /> : null}
      <ErrorAlert error={keys.error} />
      {keys.data && keys.data.length === 0 ? <p class="muted">No keys yet.</p> : null}
      {keys.data && keys.data.length > 0 ? (
        <ul class="people" data-testid="key-list">
          {keys.data.map((k) => (
            <li key={k.id} class="person" data-testid="key-row">
              <div class="person-main">
                <strong>
                  {k.name} <span class={`badge ${k.mode === 'live' ? 'ok' : 'warn'}`}>{k.mode}</span>
                </strong>
                <small class="muted">
                  <code>{k.redacted}</code> · created {formatDateTime(k.created_at)}
                </small>
              </div>
              <button type="button" class="secondary small danger-text" onClick={() => void revoke(k)}>
                Revoke
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function Push() {
  const [state, setState] = useState<PushState>('checking');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => void pushState().then(setState), []);
  const run = async (fn: () => Promise<PushState>) => {
    setBusy(true);
    setError(null);
    try {
      setState(await fn());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const enable = () => run(enablePush);
  const disable = () => run(async () => (await disablePush(), 'off'));
  return (
    <div class="card stack" data-testid="push-settings">
      <h2>Push notifications</h2>
      <p class="muted">Alerts from your organizations, incidents assigned to you and new incidents you create, on this browser, at once. Without notifications on any browser, alerts reach you by email.</p>
      <ErrorAlert error={error} />
      {state === 'checking' ? <Loading /> : null}
      {state === 'unsupported' ? <div class="alert info">This browser cannot receive push notifications. On iPhone, add Muster to the home screen first.</div> : null}
      {state === 'denied' ? <div class="alert info">Notifications are blocked for this site. Allow them in the browser's site settings, then reload.</div> : null}
      {state === 'off' ? (
        <div>
          <button type="button" onClick={() => void enable()} disabled={busy} data-testid="push-enable">
            {busy ? 'Turning on…' : 'Turn on notifications'}
          </button>
        </div>
      ) : null}
      {state === 'on' ? (
        <div class="row">
          <span class="badge ok">On for this browser</span>
          <button type="button" class="secondary small" onClick={() => void disable()} disabled={busy}>
            Turn off
          </button>
        </div>
      ) : null}
    </div>
  );
}

function Calendar() {
  const feed = useAsync(() => get<{ url: string }>('/v1/calendar'), []);
  const [error, setError] = useState<unknown>(null);
  const rotate = async () => {
    if (!confirm('Make a new calendar link? The current one stops working at once.')) return;
    setError(null);
    try {
      const r = await post<{ url: string }>('/v1/calendar/rotate');
      feed.setData(() => r);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card stack" data-testid="calendar-feed">
      <h2>Calendar feed</h2>
      <p class="muted">Subscribe to this private link in your calendar app to see your upcoming bookings. Keep it secret.</p>
      <ErrorAlert error={feed.error ?? error} />
      {feed.loading && !feed.data ? <Loading /> : null}
      {feed.data ? (
        <>
          <div class="link-box">
            <code class="secret">{feed.data.url}</code>
            <CopyButton text={feed.data.url} />
          </div>
          <div>
            <button type="button" class="secondary small" onClick={() => void rotate()}>
              Make a new link
            </button>
          </div>
        </>
      ) : null}
    </div>
  );
}
