// An org's dispatch settings on its page (issue 33: before, by API only): the default escalation
// policy (docs/paging.md) and, for an org without one, how long an urgent or high incident may stay
// unacknowledged before it escalates (docs/dispatch.md). Admins and owners change them.
import { useEffect, useState } from 'preact/hooks';
import { get, patch } from '../../lib/api';
import type { DispatchSettings, EscalationPolicy } from '../types';
import { ErrorAlert, FieldError, Loading, useAsync } from '../ui';

const LEVELS = [
  ['urgent', 'Urgent incidents'],
  ['high', 'High-priority incidents'],
] as const;

const words = (m: number | null) => (m === null ? 'never escalate' : `escalate after ${m} min without acknowledgement`);

export function DispatchSettingsCard({ base, slug, manage }: { base: string; slug: string; manage: boolean }) {
  const settings = useAsync(() => get<DispatchSettings>(`${base}/dispatch`), [base]);
  const policies = useAsync(() => get<{ escalation_policies: EscalationPolicy[] }>(`${base}/escalation-policies`).then((r) => r.escalation_policies), [base]);
  const [form, setForm] = useState<{ urgent: string; high: string; policy: string }>({ urgent: '', high: '', policy: '' });
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = settings.data;
    if (d)
      setForm({
        urgent: d.ack_timeout_minutes.urgent === null ? '' : String(d.ack_timeout_minutes.urgent),
        high: d.ack_timeout_minutes.high === null ? '' : String(d.ack_timeout_minutes.high),
        policy: d.default_escalation_policy_id === null ? '' : String(d.default_escalation_policy_id),
      });
  }, [settings.data]);
  const policyName = (id: number | null) => (id === null ? null : (policies.data?.find((p) => p.id === id)?.name ?? `policy ${id}`));
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const value = (v: string) => (v.trim() === '' ? null : Number(v));
      const r = await patch<DispatchSettings>(`${base}/dispatch`, {
        ack_timeout_minutes: { urgent: value(form.urgent), high: value(form.high) },
        default_escalation_policy_id: value(form.policy),
      });
      settings.setData(() => r);
      const name = policyName(r.default_escalation_policy_id);
      setSaved(
        `Saved: ${name ? `field alerts, email and API incidents page by “${name}”` : 'no default escalation policy'}; without a policy, urgent incidents ${words(r.ack_timeout_minutes.urgent)}, high ones ${words(r.ack_timeout_minutes.high)}.`,
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const policiesPath = `/app/orgs/${encodeURIComponent(slug)}/escalation-policies`;
  return (
    <form class="card stack" data-testid="dispatch-settings" onSubmit={(e) => void submit(e)} noValidate>
      <h2>Dispatch</h2>
      <ErrorAlert error={settings.error ?? policies.error ?? error} />
      {saved ? (
        <p class="saved-note" role="status" data-testid="dispatch-settings-saved">
          {saved}
        </p>
      ) : null}
      {!settings.data && !settings.error ? <Loading label="Loading dispatch settings" /> : null}
      {settings.data ? (
        <>
          <div class="field">
            <label for="default-policy">Default escalation policy</label>
            <select
              id="default-policy"
              name="default_escalation_policy_id"
              data-field="default_escalation_policy_id"
              data-testid="default-policy"
              disabled={!manage}
              value={form.policy}
              onChange={(e) => setForm({ ...form, policy: e.currentTarget.value })}
            >
              <option value="">None: alert the org's admins (the timeouts below)</option>
              {(policies.data ?? []).map((p) => (
                <option key={p.id} value={String(p.id)}>
                  {p.name}
                </option>
              ))}
            </select>
            <FieldError error={error} name="default_escalation_policy_id" />
            <small>
              Pages for field alerts, email and API incidents, and for integrations without their own policy. <a href={policiesPath}>Escalation policies</a>
            </small>
          </div>
          <p class="muted">
            Without a policy, an assigned incident that nobody acknowledges escalates: its assignee and the org's admins are alerted again (at most three
            times). Normal and low incidents never escalate. A change applies to each incident's next step.
          </p>
          <div class="grid-2">
            {LEVELS.map(([level, label]) => (
              <div class="field" key={level}>
                <label for={`ack-${level}`}>{label}: minutes to acknowledge</label>
                <input
                  id={`ack-${level}`}
                  name={`ack_timeout_minutes.${level}`}
                  data-field={`ack_timeout_minutes.${level}`}
                  data-testid={`ack-${level}`}
                  type="number"
                  inputMode="numeric"
                  min={1}
                  max={1440}
                  placeholder="never"
                  disabled={!manage}
                  value={form[level]}
                  onInput={(e) => setForm({ ...form, [level]: e.currentTarget.value })}
                />
                <FieldError error={error} name={`ack_timeout_minutes.${level}`} />
                <small>Empty: never escalates. 1 to 1440.</small>
              </div>
            ))}
          </div>
        </>
      ) : null}
      {manage ? (
        <div>
          <button type="submit" disabled={busy || !settings.data} data-testid="dispatch-settings-save">
            {busy ? 'Saving…' : 'Save dispatch settings'}
          </button>
        </div>
      ) : (
        <p class="muted small-print">Only the org's admins and owners change these.</p>
      )}
    </form>
  );
}
