// Integrations: monitoring tools (Alertmanager, Grafana, anything speaking PagerDuty's Events API)
// and a mailbox opening incidents in an org. Made here instead of by curl: the org (never guessed),
// the priority map, the default assignee and the escalation policy; the key and its URLs are shown
// once; the policy is changed and the integration revoked from the list.
import { useMemo, useState } from 'preact/hooks';
import { ApiError, del, get, patch, post } from '../../lib/api';
import { formatDateTime } from '../../lib/format';
import { orgName, useSession } from '../session';
import type { CreatedIntegration, EscalationPolicy, Integration, Member, Org, Priority } from '../types';
import { CopyButton, Empty, ErrorAlert, FieldError, Loading, PageHeader, PRIORITY_LABEL, useAsync } from '../ui';
import { EventLog, HeartbeatState, MaintenanceWindows } from './integration-extras';

const SEVERITIES = [
  ['critical', 'Critical'],
  ['error', 'Error'],
  ['warning', 'Warning'],
  ['info', 'Info'],
] as const;
type Severity = (typeof SEVERITIES)[number][0];
const DEFAULT_MAP: Record<Severity, Priority> = { critical: 'urgent', error: 'high', warning: 'normal', info: 'low' };
const PRIORITIES: Priority[] = ['urgent', 'high', 'normal', 'low'];

const URLS: ['alertmanager_url' | 'grafana_url' | 'events_url', string, string][] = [
  ['alertmanager_url', 'Alertmanager', 'webhook_configs url, with send_resolved: true'],
  ['grafana_url', 'Grafana', 'contact point of type Webhook, method POST'],
  ['events_url', 'PagerDuty Events API v2', 'for tools that take only a URL; others keep https://…/v2/enqueue with the key as routing key'],
];

type PoliciesOf = (slug: string) => Promise<EscalationPolicy[]>;

/** An org's escalation policies, read once per visit of the page for the form and every row of that org. */
function policyReader(): PoliciesOf {
  const cache = new Map<string, Promise<EscalationPolicy[]>>();
  return (slug) => {
    let p = cache.get(slug);
    if (!p) {
      p = get<{ escalation_policies: EscalationPolicy[] }>(`/v1/orgs/${encodeURIComponent(slug)}/escalation-policies`).then((r) => r.escalation_policies);
      p.catch(() => cache.delete(slug));
      cache.set(slug, p);
    }
    return p;
  };
}

/** Orgs whose integrations the user may manage (admins and owners), shared orgs first. */
const manageable = (orgs: Org[]) => orgs.filter((o) => o.role !== 'member' && !o.locked).sort((a, b) => Number(a.personal) - Number(b.personal));

function Created({ created, onDone }: { created: CreatedIntegration; onDone: () => void }) {
  return (
    <div class="card stack created-secret" data-testid="integration-created" role="region" aria-label={`${created.name} is ready`}>
      <h2>“{created.name}” is ready</h2>
      <div class="alert info">
        Copy the key and the URLs now: they carry the secret and are <strong>shown only this once</strong> (Muster keeps only a hash). Keep them as
        secret as a password.
      </div>
      <dl class="stack">
        <div>
          <dt class="muted">Integration key (routing key)</dt>
          <dd class="link-box">
            <span class="mono" data-testid="integration-key">
              {created.key}
            </span>
            <CopyButton text={created.key} />
          </dd>
        </div>
        {created.heartbeat_url ? (
          <div>
            <dt class="muted">
              Heartbeat URL <small>(GET, HEAD or POST it at least every {created.heartbeat?.interval_seconds} s; the Alertmanager URL takes the Watchdog)</small>
            </dt>
            <dd class="link-box">
              <span class="mono" data-testid="integration-heartbeat_url">
                {created.heartbeat_url}
              </span>
              <CopyButton text={created.heartbeat_url} />
            </dd>
          </div>
        ) : null}
        {URLS.map(([key, label, hint]) => (
          <div key={key}>
            <dt class="muted">
              {label} <small>({hint})</small>
            </dt>
            <dd class="link-box">
              <span class="mono" data-testid={`integration-${key}`}>
                {created[key]}
              </span>
              <CopyButton text={created[key]} />
            </dd>
          </div>
        ))}
        {created.email_address ? (
          <div>
            <dt class="muted">Email address (forward your support mailbox here)</dt>
            <dd class="link-box">
              <span class="mono">{created.email_address}</span>
              <CopyButton text={created.email_address} />
            </dd>
          </div>
        ) : null}
      </dl>
      <div>
        <button type="button" data-testid="integration-saved" onClick={onDone}>
          I have saved them
        </button>
      </div>
    </div>
  );
}

function NewIntegration({ orgs, policiesOf, onCreated }: { orgs: Org[]; policiesOf: PoliciesOf; onCreated: (c: CreatedIntegration) => void }) {
  const { orgId } = useSession();
  const choices = manageable(orgs);
  const [name, setName] = useState('');
  const [org, setOrg] = useState<number | ''>(() => (orgId !== null && choices.some((o) => o.id === orgId) ? orgId : choices.length === 1 ? choices[0]!.id : ''));
  const [assignee, setAssignee] = useState('');
  const [policy, setPolicy] = useState('');
  const [map, setMap] = useState<Record<Severity, Priority>>(DEFAULT_MAP);
  const [type, setType] = useState<'alerts' | 'heartbeat'>('alerts');
  const [interval, setIntervalSeconds] = useState('300');
  const [grace, setGrace] = useState('60');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const slug = choices.find((o) => o.id === org)?.slug;
  const members = useAsync(() => (slug ? get<{ members: Member[] }>(`/v1/orgs/${slug}/members`).then((r) => r.members) : Promise.resolve([])), [slug]);
  const policies = useAsync(() => (slug ? policiesOf(slug) : Promise.resolve([])), [slug]);
  const chosen = choices.find((o) => o.id === org);
  const submit = async (e: Event) => {
    e.preventDefault();
    // The organization is always chosen here, never left for the server to pick.
    if (org === '') return setError(new ApiError(422, { error: 'Validation failed', code: 'validation_failed', details: [{ field: 'org_id', message: 'choose the organization whose members see its incidents' }] }));
    setBusy(true);
    setError(null);
    try {
      const created = await post<CreatedIntegration>('/v1/integrations', {
        name,
        org_id: org,
        default_assignee_id: assignee ? Number(assignee) : null,
        escalation_policy_id: policy ? Number(policy) : null,
        ...(type === 'heartbeat' ? { type, interval_seconds: Number(interval), grace_seconds: Number(grace) } : { priority_map: map }),
      });
      setName('');
      setAssignee('');
      setPolicy('');
      setMap(DEFAULT_MAP);
      onCreated(created);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card stack" onSubmit={(e) => void submit(e)} data-testid="new-integration" noValidate>
      <h2>New integration</h2>
      <ErrorAlert error={error} />
      <div class="grid-2">
        <div class="field">
          <label for="integration-name">Name</label>
          <input id="integration-name" name="name" required maxLength={100} placeholder="Prometheus production" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <FieldError error={error} name="name" />
        </div>
        <div class="field">
          <label for="integration-org_id">Organization</label>
          <select id="integration-org_id" name="org_id" data-testid="integration-org" value={String(org)} onChange={(e) => setOrg(e.currentTarget.value ? Number(e.currentTarget.value) : '')}>
            <option value="">Choose the organization…</option>
            {choices.map((o) => (
              <option key={o.id} value={String(o.id)}>
                {o.personal ? `${o.name} (personal: only you see its incidents)` : o.name}
              </option>
            ))}
          </select>
          <FieldError error={error} name="org_id" />
          <small>Its incidents are seen by this organization's members{chosen?.personal ? ': a personal org has only you' : ''}.</small>
        </div>
      </div>
      <div class="field">
        <label for="integration-type">Type</label>
        <select id="integration-type" data-testid="integration-type" value={type} onChange={(e) => setType(e.currentTarget.value as 'alerts' | 'heartbeat')}>
          <option value="alerts">Alerts: a tool posts alerts (Alertmanager, Grafana, Events API, email)</option>
          <option value="heartbeat">Heartbeat: a monitor pings it, and its silence opens an incident</option>
        </select>
      </div>
      {type === 'heartbeat' ? (
        <div class="grid-2">
          <div class="field">
            <label for="integration-interval_seconds">Expected every (seconds)</label>
            <input id="integration-interval_seconds" data-testid="integration-interval" type="number" min={30} max={86400} value={interval} onInput={(e) => setIntervalSeconds(e.currentTarget.value)} />
            <FieldError error={error} name="interval_seconds" />
            <small>30 s to 1 day. No ping for this long, plus the grace, opens an urgent incident; the next ping resolves it.</small>
          </div>
          <div class="field">
            <label for="integration-grace_seconds">Grace (seconds)</label>
            <input id="integration-grace_seconds" type="number" min={0} max={86400} value={grace} onInput={(e) => setGrace(e.currentTarget.value)} />
            <FieldError error={error} name="grace_seconds" />
          </div>
        </div>
      ) : null}
      <div class="field">
        <label for="integration-escalation_policy_id">Escalation policy</label>
        <select
          id="integration-escalation_policy_id"
          name="escalation_policy_id"
          data-testid="integration-policy"
          value={policy}
          disabled={!slug}
          onChange={(e) => setPolicy(e.currentTarget.value)}
        >
          <option value="">The organization's default</option>
          {(policies.data ?? []).map((p) => (
            <option key={p.id} value={String(p.id)}>
              {p.name}
            </option>
          ))}
        </select>
        <FieldError error={error} name="escalation_policy_id" />
        <small>
          Who is paged for its incidents, level after level.{' '}
          {slug ? <a href={`/app/orgs/${encodeURIComponent(slug)}/escalation-policies`}>Escalation policies of {chosen?.name}</a> : 'Choose the organization first.'}
        </small>
      </div>
      <div class="field">
        <label for="integration-default_assignee_id">Default assignee</label>
        <select id="integration-default_assignee_id" name="default_assignee_id" data-testid="integration-assignee" value={assignee} disabled={!slug} onChange={(e) => setAssignee(e.currentTarget.value)}>
          <option value="">Nobody (the dispatcher assigns)</option>
          {(members.data ?? []).map((m) => (
            <option key={m.user_id} value={String(m.user_id)}>
              {m.name}
            </option>
          ))}
        </select>
        <FieldError error={error} name="default_assignee_id" />
        <small>New incidents are assigned to them, who gets a push and a phone alert.</small>
      </div>
      {type === 'alerts' ? (
        <fieldset class="priority-map">
          <legend>Priority of each severity</legend>
          <div class="grid-4">
            {SEVERITIES.map(([sev, label]) => (
              <div class="field" key={sev}>
                <label for={`integration-map-${sev}`}>{label}</label>
                <select id={`integration-map-${sev}`} data-testid={`integration-map-${sev}`} value={map[sev]} onChange={(e) => setMap({ ...map, [sev]: e.currentTarget.value as Priority })}>
                  {PRIORITIES.map((p) => (
                    <option key={p} value={p}>
                      {PRIORITY_LABEL[p]}
                    </option>
                  ))}
                </select>
              </div>
            ))}
          </div>
          <small>Alertmanager's and Grafana's `severity` label, or the Events API's `severity`.</small>
        </fieldset>
      ) : null}
      <div class="row">
        <button type="submit" disabled={busy} data-testid="integration-submit">
          {busy ? 'Creating…' : 'Create integration'}
        </button>
      </div>
    </form>
  );
}

/** The integration's policy, changed in place (PATCH); the org's default when none. */
function RowPolicy({ integration, orgs, policiesOf, onSaved }: { integration: Integration; orgs: Org[]; policiesOf: PoliciesOf; onSaved: (i: Integration) => void }) {
  const slug = orgs.find((o) => o.id === integration.org_id)?.slug;
  const policies = useAsync(() => (slug ? policiesOf(slug) : Promise.resolve([])), [slug]);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const change = async (value: string) => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const updated = await patch<Integration>(`/v1/integrations/${integration.id}`, { escalation_policy_id: value ? Number(value) : null });
      onSaved(updated);
      const name = policies.data?.find((p) => p.id === updated.escalation_policy_id)?.name;
      setSaved(name ? `Saved: pages by “${name}”.` : 'Saved: pages by the organization’s default.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const id = `integration-${integration.id}-policy`;
  return (
    <div class="field">
      <label for={id}>Escalation policy</label>
      <div class="row tight">
        <select id={id} class="compact grow" data-testid="integration-row-policy" value={integration.escalation_policy_id === null ? '' : String(integration.escalation_policy_id)} disabled={busy || !policies.data} onChange={(e) => void change(e.currentTarget.value)}>
          <option value="">The organization's default</option>
          {(policies.data ?? []).map((p) => (
            <option key={p.id} value={String(p.id)}>
              {p.name}
            </option>
          ))}
        </select>
      </div>
      <ErrorAlert error={error ?? policies.error} />
      {saved ? (
        <small class="saved-note" role="status" data-testid="integration-policy-saved">
          {saved}
        </small>
      ) : null}
    </div>
  );
}

export function IntegrationsView() {
  const { orgs, orgId } = useSession();
  const list = useAsync(() => get<{ integrations: Integration[] }>('/v1/integrations').then((r) => r.integrations), []);
  const policiesOf = useMemo(policyReader, []);
  const [created, setCreated] = useState<CreatedIntegration | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const [logOf, setLogOf] = useState<number | null>(null);
  const revoke = async (i: Integration) => {
    if (!confirm(`Revoke "${i.name}"? Its URLs and key stop working at once and mail to its address bounces.`)) return;
    setError(null);
    try {
      await del(`/v1/integrations/${i.id}`);
      list.setData((l) => l?.filter((x) => x.id !== i.id));
      setRevoked(`“${i.name}” was revoked.`);
    } catch (err) {
      setError(err);
    }
  };
  const shown = list.data?.filter((i) => orgId === null || i.org_id === orgId);
  const canManage = manageable(orgs).length > 0;
  return (
    <section class="view">
      <PageHeader title="Integrations" sub="Monitoring tools and mailboxes that open incidents: Alertmanager, Grafana, anything that speaks PagerDuty's Events API, email; and heartbeats, whose silence does." />
      <ErrorAlert error={list.error ?? error} />
      {revoked ? (
        <p class="saved-note" role="status" data-testid="integration-revoked">
          {revoked}
        </p>
      ) : null}
      {created ? (
        <Created
          created={created}
          onDone={() => {
            setCreated(null);
          }}
        />
      ) : null}
      {canManage ? (
        <NewIntegration
          orgs={orgs}
          policiesOf={policiesOf}
          onCreated={(c) => {
            setCreated(c);
            setRevoked(null);
            list.reload();
          }}
        />
      ) : (
        <div class="alert info">Integrations are managed by an organization's admins and owners.</div>
      )}
      {list.loading && !list.data ? <Loading label="Loading integrations" /> : null}
      {shown && shown.length === 0 ? <Empty title="No integrations yet">Create one, then paste its URL into your monitoring tool.</Empty> : null}
      <ul class="cards" data-testid="integration-list">
        {shown?.map((i) => (
          <li key={i.id} class="card stack" data-testid="integration-row" data-id={i.id}>
            <div class="row">
              <h2>{i.name}</h2>
              {!i.livemode ? <span class="badge warn">Test mode</span> : null}
              <span class="spacer" />
              <button type="button" class="secondary small danger-text" data-testid="integration-revoke" onClick={() => void revoke(i)}>
                Revoke
              </button>
            </div>
            <p class="muted">
              {orgName(orgs, i.org_id)} · key <span class="mono">{i.redacted_key}</span> · created {formatDateTime(i.created_at)}
            </p>
            {i.heartbeat ? <HeartbeatState heartbeat={i.heartbeat} /> : null}
            <RowPolicy integration={i} orgs={orgs} policiesOf={policiesOf} onSaved={(x) => list.setData((l) => l?.map((y) => (y.id === x.id ? x : y)))} />
            {i.heartbeat ? null : (
              <p class="small-print">
                Priorities: {SEVERITIES.map(([sev, label]) => `${label} → ${PRIORITY_LABEL[i.priority_map[sev]] ?? i.priority_map[sev]}`).join(', ')}
                {i.default_assignee_id ? ' · new incidents go to a default assignee' : ''}
                {i.email_address ? ` · email ${i.email_address}` : ''}
              </p>
            )}
            <div>
              <button type="button" class="secondary small" data-testid="integration-log-toggle" aria-expanded={logOf === i.id} onClick={() => setLogOf(logOf === i.id ? null : i.id)}>
                {logOf === i.id ? 'Hide the event log' : 'Event log'}
              </button>
            </div>
            {logOf === i.id ? <EventLog integration={i} /> : null}
          </li>
        ))}
      </ul>
      {manageable(orgs)
        // A personal org's windows only once it has an integration: most people have one and never use it for this.
        .filter((o) => (orgId === null || o.id === orgId) && (!o.personal || o.id === orgId || list.data?.some((i) => i.org_id === o.id)))
        .map((o) => (
          <MaintenanceWindows key={o.id} org={o} integrations={list.data ?? []} />
        ))}
    </section>
  );
}
