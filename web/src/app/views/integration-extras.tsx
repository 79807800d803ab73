// Issue #37 on the Integrations page: a heartbeat's state and last ping, an integration's event log
// (why an alert did or did not page), the org's maintenance windows; and the banner the incidents
// page shows while a window is active.
import { useState } from 'preact/hooks';
import { del, get, post } from '../../lib/api';
import { ago, formatDateTime } from '../../lib/format';
import type { Heartbeat, Integration, IntegrationEvent, MaintenanceWindow, Org } from '../types';
import { Empty, ErrorAlert, FieldError, Loading, useAsync } from '../ui';

const STATE: Record<Heartbeat['status'], [string, string]> = {
  new: ['Waiting for the first ping', ''],
  up: ['Up', 'ok'],
  late: ['Late', 'warn'],
  down: ['Down', 'danger'],
};

const duration = (seconds: number) => (seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);

/** A heartbeat's state, its last ping and what it expects. */
export function HeartbeatState({ heartbeat }: { heartbeat: Heartbeat }) {
  const [label, tone] = STATE[heartbeat.status];
  return (
    <p class="row tight" data-testid="heartbeat-state" data-status={heartbeat.status}>
      <span class={`badge ${tone}`}>{label}</span>
      <span class="muted">
        {heartbeat.last_ping_at ? `last ping ${ago(heartbeat.last_ping_at)} (${formatDateTime(heartbeat.last_ping_at)})` : 'never pinged'} · every {duration(heartbeat.interval_seconds)}
        {heartbeat.grace_seconds ? `, ${duration(heartbeat.grace_seconds)} grace` : ''}
        {heartbeat.status === 'down' && heartbeat.incident_id ? (
          <>
            {' · '}
            <a href={`/app/incidents/${heartbeat.incident_id}`}>incident #{heartbeat.incident_id}</a>
          </>
        ) : null}
      </span>
    </p>
  );
}

const OUTCOME: Record<string, [string, string]> = {
  opened: ['Opened', 'danger'],
  repeated: ['Repeated', 'warn'],
  resolved: ['Resolved', 'ok'],
  acknowledged: ['Acknowledged', 'brand'],
  suppressed: ['Suppressed', ''],
  rejected: ['Rejected', 'danger'],
  ignored: ['Ignored', ''],
};
const SOURCE: Record<string, string> = { events_api: 'Events API', alertmanager: 'Alertmanager', grafana: 'Grafana', heartbeat: 'Heartbeat' };

/** The last 100 payloads of an integration, newest first, each with what came of it. */
export function EventLog({ integration }: { integration: Integration }) {
  const log = useAsync(() => get<{ events: IntegrationEvent[] }>(`/v1/integrations/${integration.id}/events`).then((r) => r.events), [integration.id]);
  return (
    <div class="stack" data-testid="event-log">
      <div class="row">
        <h3>Event log</h3>
        <span class="spacer" />
        <button type="button" class="secondary small" onClick={log.reload}>
          Refresh
        </button>
      </div>
      <ErrorAlert error={log.error} />
      {log.loading && !log.data ? <Loading label="Loading the event log" /> : null}
      {log.data && log.data.length === 0 ? <p class="muted">Nothing received in the last 7 days.</p> : null}
      <ul class="list stack">
        {log.data?.map((e) => {
          const [label, tone] = OUTCOME[e.outcome] ?? [e.outcome, ''];
          return (
            <li key={e.id} data-testid="event-log-entry" data-outcome={e.outcome}>
              <div class="row tight">
                <span class={`badge ${tone}`}>{label}</span>
                <span class="muted">
                  {SOURCE[e.source] ?? e.source} · {formatDateTime(e.at)}
                </span>
                {e.incident_id ? <a href={`/app/incidents/${e.incident_id}`}>incident #{e.incident_id}</a> : null}
              </div>
              {e.reason ? <p class="small-print">{e.reason}</p> : null}
              {e.alerts ? <p class="small-print">{e.alerts.map((a) => `${a.ref}: ${OUTCOME[a.outcome]?.[0] ?? a.outcome}`).join(' · ')}</p> : null}
              {e.body ? (
                <details>
                  <summary>Body{e.body_truncated ? ' (first 64 KB)' : ''}</summary>
                  <pre class="mono small-print">{e.body}</pre>
                </details>
              ) : null}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** `datetime-local` text for an instant, in the browser's zone. */
const localInput = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

const covering = (w: MaintenanceWindow, integrations: Integration[]) =>
  w.integration_ids === null ? 'all integrations' : w.integration_ids.map((id) => integrations.find((i) => i.id === id)?.name ?? `#${id}`).join(', ');

/** An org's current and upcoming windows, a form to plan one, and ending or deleting one. */
export function MaintenanceWindows({ org, integrations }: { org: Org; integrations: Integration[] }) {
  const base = `/v1/orgs/${encodeURIComponent(org.slug)}/maintenance-windows`;
  const windows = useAsync(() => get<{ maintenance_windows: MaintenanceWindow[] }>(base).then((r) => r.maintenance_windows), [base]);
  const mine = integrations.filter((i) => i.org_id === org.id);
  const [start, setStart] = useState(() => localInput(new Date()));
  const [end, setEnd] = useState(() => localInput(new Date(Date.now() + 2 * 3600_000)));
  const [description, setDescription] = useState('');
  const [chosen, setChosen] = useState<number[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await post<MaintenanceWindow>(base, {
        start: new Date(start).toISOString(),
        end: new Date(end).toISOString(),
        description: description.trim() || null,
        integration_ids: chosen.length ? chosen : null,
      });
      setDescription('');
      setChosen([]);
      windows.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const remove = async (w: MaintenanceWindow) => {
    setError(null);
    try {
      await del(`${base}/${w.id}`);
      windows.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="card stack" data-testid="maintenance-windows" aria-labelledby={`maintenance-${org.id}`}>
      <h2 id={`maintenance-${org.id}`}>Maintenance windows · {org.name}</h2>
      <p class="muted">During a window the covered integrations still answer their tools, but open no incident, repeat none and page nobody. A resolve still resolves.</p>
      <ErrorAlert error={windows.error ?? error} />
      {windows.data && windows.data.length === 0 ? <Empty title="No window planned" /> : null}
      <ul class="list stack">
        {windows.data?.map((w) => (
          <li key={w.id} class="row" data-testid="maintenance-window" data-active={String(w.active)}>
            {w.active ? <span class="badge warn">Active</span> : <span class="badge">Planned</span>}
            <span>
              {formatDateTime(w.start)} – {formatDateTime(w.end)}
              {w.description ? ` · ${w.description}` : ''} · {covering(w, integrations)}
            </span>
            <span class="spacer" />
            <button type="button" class="secondary small" data-testid="maintenance-window-end" onClick={() => void remove(w)}>
              {w.active ? 'End now' : 'Delete'}
            </button>
          </li>
        ))}
      </ul>
      <form class="stack" onSubmit={(e) => void submit(e)} noValidate data-testid="maintenance-form">
        <div class="grid-2">
          <div class="field">
            <label for={`mw-start-${org.id}`}>Start</label>
            <input id={`mw-start-${org.id}`} type="datetime-local" value={start} onInput={(e) => setStart(e.currentTarget.value)} />
            <FieldError error={error} name="start" />
          </div>
          <div class="field">
            <label for={`mw-end-${org.id}`}>End</label>
            <input id={`mw-end-${org.id}`} type="datetime-local" data-testid="maintenance-end" value={end} onInput={(e) => setEnd(e.currentTarget.value)} />
            <FieldError error={error} name="end" />
          </div>
        </div>
        <div class="field">
          <label for={`mw-description-${org.id}`}>Description</label>
          <input id={`mw-description-${org.id}`} data-testid="maintenance-description" maxLength={500} placeholder="Core switch replacement" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        {mine.length ? (
          <fieldset class="stack">
            <legend>Integrations (none ticked: all of them)</legend>
            {mine.map((i) => (
              <label key={i.id} class="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(i.id)}
                  onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, i.id] : chosen.filter((x) => x !== i.id))}
                />
                {i.name}
              </label>
            ))}
            <FieldError error={error} name="integration_ids" />
          </fieldset>
        ) : null}
        <div class="row">
          <button type="submit" disabled={busy} data-testid="maintenance-submit">
            {busy ? 'Planning…' : 'Plan window'}
          </button>
        </div>
      </form>
    </section>
  );
}

/** The incidents page's banner: the active maintenance windows of the orgs shown. */
export function MaintenanceBanner({ orgs }: { orgs: Org[] }) {
  const key = orgs.map((o) => o.slug).join(',');
  const active = useAsync(
    () =>
      Promise.all(
        orgs.slice(0, 10).map((o) =>
          get<{ maintenance_windows: MaintenanceWindow[] }>(`/v1/orgs/${encodeURIComponent(o.slug)}/maintenance-windows`)
            .then((r) => r.maintenance_windows.filter((w) => w.active).map((w) => ({ w, org: o })))
            .catch(() => []),
        ),
      ).then((all) => all.flat()),
    [key],
  );
  if (!active.data) return null;
  // Rendered once the windows are read, none included (hidden then), so a page can tell "none" from "not read yet".
  return (
    <div class="stack" data-testid="maintenance-banners" data-count={active.data.length} style={active.data.length ? undefined : { display: 'none' }}>
      {active.data.map(({ w, org }) => (
        <div key={w.id} class="alert warn" role="status" data-testid="maintenance-banner">
          <strong>Maintenance in {org.name}</strong> until {formatDateTime(w.end)}
          {w.description ? `: ${w.description}` : ''}. {w.integration_ids === null ? 'Its integrations' : `${w.integration_ids.length} of its integrations`} open no incidents and page nobody
          until then.
        </div>
      ))}
    </div>
  );
}
