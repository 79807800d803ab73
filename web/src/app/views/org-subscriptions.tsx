// An org's incident subscriptions on its page (issue #37; docs/integrations.md, section 6): where
// incident events are posted (a signed webhook, a Slack/Mattermost/Rocket.Chat room, a Teams
// channel), "Send test", turning one on again after its receiver answered 410, and deleting it.
// Admins and owners only: a subscription's URL is itself a credential.
import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../../lib/api';
import { formatDateTime } from '../../lib/format';
import type { IncidentSubscription, SubscriptionTestResult } from '../types';
import { CopyButton, ErrorAlert, FieldError, Loading, useAsync } from '../ui';

const EVENTS: [string, string][] = [
  ['incident.created', 'Created'],
  ['incident.acknowledged', 'Acknowledged'],
  ['incident.assigned', 'Assigned'],
  ['incident.escalated', 'Escalated'],
  ['incident.resolved', 'Resolved'],
  ['incident.reopened', 'Reopened'],
  ['incident.reply', 'Public reply'],
  ['signal.alert', 'Field alert'],
  ['oncall.shift_started', 'On-call shift started'],
];
const FORMATS: [string, string][] = [
  ['chat', 'Chat room: Slack, Mattermost, Rocket.Chat'],
  ['teams', 'Microsoft Teams (Workflows webhook)'],
  ['standard', 'Signed webhook (Standard Webhooks)'],
];
const formatLabel = (f: string) => FORMATS.find(([k]) => k === f)?.[1] ?? f;
const eventLabel = (e: string) => EVENTS.find(([k]) => k === e)?.[1] ?? e;
/** The URL's host and the start of its path: the rest is the credential. */
const shortUrl = (url: string) => {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname.length > 16 ? `${u.pathname.slice(0, 16)}…` : u.pathname}`;
  } catch {
    return url;
  }
};

export function SubscriptionsCard({ base, manage }: { base: string; manage: boolean }) {
  const list = useAsync(() => get<{ data: IncidentSubscription[] }>(`${base}/webhooks`).then((r) => r.data), [base]);
  const [actionError, setActionError] = useState<unknown>(null);
  const [results, setResults] = useState<Record<number, SubscriptionTestResult | 'sending'>>({});

  const act = async (f: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await f();
      list.reload();
    } catch (err) {
      setActionError(err);
    }
  };
  const sendTest = async (s: IncidentSubscription) => {
    setActionError(null);
    setResults((r) => ({ ...r, [s.id]: 'sending' }));
    try {
      const result = await post<SubscriptionTestResult>(`${base}/webhooks/${s.id}/test`);
      setResults((r) => ({ ...r, [s.id]: result }));
    } catch (err) {
      setResults((r) => {
        const { [s.id]: _, ...rest } = r;
        return rest;
      });
      setActionError(err);
    }
  };

  return (
    <div class="card stack" data-testid="subscriptions">
      <h2>Subscriptions</h2>
      <p class="muted">
        Incident events posted to a chat room, a Teams channel or your own automation, with retries. Posts from test keys carry test incidents only.
      </p>
      <ErrorAlert error={list.error ?? actionError} />
      {list.loading && !list.data ? <Loading label="Loading subscriptions" /> : null}
      {list.data && list.data.length === 0 ? <p class="muted">No subscriptions yet.</p> : null}
      <ul class="people" data-testid="subscription-list">
        {list.data?.map((s) => {
          const result = results[s.id];
          return (
            <li key={s.id} class="person" data-testid="subscription">
              <div class="person-main stack">
                <strong>{s.description ?? shortUrl(s.url)}</strong>
                <span class="muted small-print">
                  {formatLabel(s.format)} · {shortUrl(s.url)}
                </span>
                <span class="row badges">
                  {s.events.map((e) => (
                    <span class="badge" key={e}>
                      {eventLabel(e)}
                    </span>
                  ))}
                  {s.enabled ? null : (
                    <span class="badge danger" data-testid="subscription-off">
                      Off{s.disabled_reason ? `: ${s.disabled_reason}` : ''}
                      {s.disabled_at ? ` (${formatDateTime(s.disabled_at)})` : ''}
                    </span>
                  )}
                </span>
                {s.secret ? (
                  <span class="row small-print">
                    Signing secret <code>{`${s.secret.slice(0, 10)}…`}</code> <CopyButton text={s.secret} label="Copy secret" />
                  </span>
                ) : null}
                {result === 'sending' ? <span class="muted" role="status">Sending a test…</span> : null}
                {result && result !== 'sending' ? (
                  <span class={result.delivered ? 'saved-note' : 'alert error small-print'} role="status" data-testid="subscription-test-result">
                    {result.delivered
                      ? `Delivered: the receiver answered ${result.status_code}${result.body ? ` (${result.body.slice(0, 80)})` : ''}.`
                      : `Not delivered: ${result.error ?? 'no answer'}${result.body ? ` (${result.body.slice(0, 80)})` : ''}.`}
                  </span>
                ) : null}
              </div>
              {manage ? (
                <div class="row">
                  <button type="button" class="secondary small" data-testid="subscription-test" disabled={result === 'sending'} onClick={() => void sendTest(s)}>
                    Send test
                  </button>
                  {s.enabled ? null : (
                    <button type="button" class="secondary small" onClick={() => void act(() => patch(`${base}/webhooks/${s.id}`, { enabled: true }))}>
                      Turn on
                    </button>
                  )}
                  <button
                    type="button"
                    class="secondary small danger-text"
                    onClick={() => {
                      if (confirm('Delete this subscription? Nothing more is posted to it.')) void act(() => del(`${base}/webhooks/${s.id}`));
                    }}
                  >
                    Delete
                  </button>
                </div>
              ) : null}
            </li>
          );
        })}
      </ul>
      {manage ? <AddSubscription base={base} onAdded={list.reload} /> : null}
    </div>
  );
}

function AddSubscription({ base, onAdded }: { base: string; onAdded: () => void }) {
  const [url, setUrl] = useState('');
  const [format, setFormat] = useState('chat');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>(['incident.created', 'incident.acknowledged', 'incident.resolved']);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const toggle = (e: string) => setEvents((xs) => (xs.includes(e) ? xs.filter((x) => x !== e) : EVENTS.map(([k]) => k).filter((k) => k === e || xs.includes(k))));
  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await post(`${base}/webhooks`, { url: url.trim(), format, events, ...(description.trim() ? { description: description.trim() } : {}) });
      setUrl('');
      setDescription('');
      onAdded();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={(e) => void submit(e)} noValidate data-testid="subscription-form">
      <h3>Add a subscription</h3>
      <div class="field">
        <label for="sub-url">Webhook URL</label>
        <input id="sub-url" name="url" data-field="url" type="url" required placeholder="https://hooks.slack.com/services/…" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        <FieldError error={error} name="url" />
      </div>
      <div class="field">
        <label for="sub-format">Format</label>
        <select id="sub-format" name="format" data-field="format" value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
          {FORMATS.map(([k, label]) => (
            <option key={k} value={k}>
              {label}
            </option>
          ))}
        </select>
        <FieldError error={error} name="format" />
      </div>
      <fieldset class="stack">
        <legend>Events</legend>
        <div class="check-grid">
          {EVENTS.map(([k, label]) => (
            <label class="check" key={k}>
              <input type="checkbox" name="events" value={k} checked={events.includes(k)} onChange={() => toggle(k)} />
              {label}
            </label>
          ))}
        </div>
        <FieldError error={error} name="events" />
      </fieldset>
      <div class="field">
        <label for="sub-description">Name (optional)</label>
        <input id="sub-description" name="description" data-field="description" maxLength={200} placeholder="#ops room" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </div>
      <div>
        <button type="submit" disabled={busy} data-testid="subscription-add">
          {busy ? 'Adding…' : 'Add subscription'}
        </button>
      </div>
    </form>
  );
}
