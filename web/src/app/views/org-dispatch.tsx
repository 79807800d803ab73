// An org's dispatch settings on its page (issue 33: before, by API only): how long an urgent or high
// incident may stay unacknowledged before it escalates (docs/dispatch.md). Admins and owners change them.
import { useEffect, useState } from 'preact/hooks';
import { get, patch } from '../../lib/api';
import { ErrorAlert, FieldError, Loading, useAsync } from '../ui';

interface Timeouts {
  urgent: number | null;
  high: number | null;
}

const LEVELS = [
  ['urgent', 'Urgent incidents'],
  ['high', 'High-priority incidents'],
] as const;

const words = (m: number | null) => (m === null ? 'never escalate' : `escalate after ${m} min without acknowledgement`);

export function DispatchSettingsCard({ base, manage }: { base: string; manage: boolean }) {
  const settings = useAsync(() => get<{ ack_timeout_minutes: Timeouts }>(`${base}/dispatch`).then((r) => r.ack_timeout_minutes), [base]);
  const [form, setForm] = useState<Record<'urgent' | 'high', string>>({ urgent: '', high: '' });
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (settings.data) setForm({ urgent: settings.data.urgent === null ? '' : String(settings.data.urgent), high: settings.data.high === null ? '' : String(settings.data.high) });
  }, [settings.data]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const value = (v: string) => (v.trim() === '' ? null : Number(v));
      const r = await patch<{ ack_timeout_minutes: Timeouts }>(`${base}/dispatch`, { ack_timeout_minutes: { urgent: value(form.urgent), high: value(form.high) } });
      settings.setData(() => r.ack_timeout_minutes);
      setSaved(`Saved: urgent incidents ${words(r.ack_timeout_minutes.urgent)}, high ones ${words(r.ack_timeout_minutes.high)}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card stack" data-testid="dispatch-settings" onSubmit={(e) => void submit(e)} noValidate>
      <h2>Dispatch</h2>
      <p class="muted">
        An assigned incident that nobody acknowledges escalates: its assignee and the org's admins are alerted again (at most three times).
        Normal and low incidents never escalate. A change applies to each incident's next step.
      </p>
      <ErrorAlert error={settings.error ?? error} />
      {saved ? (
        <p class="saved-note" role="status" data-testid="dispatch-settings-saved">
          {saved}
        </p>
      ) : null}
      {!settings.data && !settings.error ? <Loading label="Loading dispatch settings" /> : null}
      {settings.data ? (
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
