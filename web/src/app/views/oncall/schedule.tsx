// One schedule: who is on call now, the next two weeks drawn per layer with the overrides and the
// final row (gaps highlighted), adding an override by picking a person and a time on the timeline,
// and the schedule's private calendar feed.
import { useRef, useState } from 'preact/hooks';
import { ApiError, del, get, post, qs } from '../../../lib/api';
import { navigate } from '../../router';
import { useSession } from '../../session';
import type { Member, Override, Schedule, ScheduleTimeline } from '../../types';
import { CopyButton, Empty, ErrorAlert, FieldError, Loading, useAsync } from '../../ui';
import { whenShort } from './list';
import { Timeline } from './timeline';

const HOUR = 3_600_000;

/** `YYYY-MM-DDTHH:MM` of an instant in the browser's zone, for a datetime-local input. */
export function localInput(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

function OverrideForm({ base, members, start, setStart, onAdded }: { base: string; members: Member[]; start: string; setStart: (v: string) => void; onAdded: () => void }) {
  const [user, setUser] = useState('');
  const [end, setEnd] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const endValue = end || (start ? localInput(new Date(start).getTime() + 4 * HOUR) : '');
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const iso = (v: string) => (v ? new Date(v).toISOString() : '');
      await post(`${base}/overrides`, { user_id: Number(user), start: iso(start), end: iso(endValue) });
      setEnd('');
      onAdded();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card stack" id="override-form" onSubmit={(e) => void submit(e)} data-testid="override-form" noValidate>
      <h2>Add an override</h2>
      <p class="muted">Someone on call in place of every layer. Click the “On call” row of the timeline to pick a start, or type it.</p>
      <ErrorAlert error={error} />
      <div class="field">
        <label for="ov-user">Person</label>
        <select id="ov-user" name="user_id" value={user} onChange={(e) => setUser(e.currentTarget.value)} data-testid="override-user">
          <option value="">Choose a person</option>
          {members.map((m) => (
            <option key={m.user_id} value={String(m.user_id)}>
              {m.name}
            </option>
          ))}
        </select>
        <FieldError error={error} name="user_id" />
      </div>
      <div class="grid-2">
        <div class="field">
          <label for="ov-start">From</label>
          <input id="ov-start" name="start" type="datetime-local" value={start} onInput={(e) => setStart(e.currentTarget.value)} data-testid="override-start" />
          <FieldError error={error} name="start" />
        </div>
        <div class="field">
          <label for="ov-end">Until</label>
          <input id="ov-end" name="end" type="datetime-local" value={endValue} onInput={(e) => setEnd(e.currentTarget.value)} data-testid="override-end" />
          <FieldError error={error} name="end" />
        </div>
      </div>
      <div class="row">
        <button type="submit" disabled={busy} data-testid="add-override">
          {busy ? 'Adding…' : 'Add override'}
        </button>
      </div>
    </form>
  );
}

export function ScheduleView({ orgSlug, scheduleRef }: { orgSlug: string; scheduleRef: string }) {
  const { orgs } = useSession();
  const org = orgs.find((o) => o.slug === orgSlug);
  const base = `/v1/orgs/${encodeURIComponent(orgSlug)}/schedules/${encodeURIComponent(scheduleRef)}`;
  const from = useRef(new Date(new Date().setHours(0, 0, 0, 0)));
  const to = new Date(from.current);
  to.setDate(to.getDate() + 14);
  const range = qs({ from: from.current.toISOString(), to: to.toISOString() });
  const schedule = useAsync(() => get<Schedule>(base), [base]);
  const timeline = useAsync(() => get<ScheduleTimeline>(`${base}/timeline${range}`), [base]);
  const overrides = useAsync(() => get<{ overrides: Override[] }>(`${base}/overrides${range}`).then((r) => r.overrides), [base]);
  const members = useAsync(() => get<{ members: Member[] }>(`/v1/orgs/${encodeURIComponent(orgSlug)}/members`).then((r) => r.members), [orgSlug]);
  const feed = useAsync(() => get<{ url: string }>(`${base}/feed`), [base]);
  const [start, setStart] = useState('');
  const [error, setError] = useState<unknown>(null);
  if (schedule.error instanceof ApiError && schedule.error.status === 404) return <Empty title="Schedule not found"><a href="/app/oncall">Back to on call</a></Empty>;
  if (!schedule.data) return schedule.error ? <ErrorAlert error={schedule.error} /> : <Loading label="Loading schedule" />;
  const s = schedule.data;
  const admin = !!org && (org.role === 'owner' || org.role === 'admin') && !org.locked;
  const names = new Map((members.data ?? []).map((m) => [m.user_id, m.name]));
  const reload = () => {
    schedule.reload();
    timeline.reload();
    overrides.reload();
  };
  const pick = (at: number) => {
    setStart(localInput(Math.floor(at / HOUR) * HOUR));
    document.getElementById('ov-user')?.focus();
  };
  const remove = async () => {
    if (!confirm(`Delete "${s.name}"? Its history is kept for reports; nobody will be on call in it from now on.`)) return;
    try {
      await del(base);
      navigate('/app/oncall');
    } catch (err) {
      setError(err);
    }
  };
  const now = timeline.data?.final.find((x) => Date.parse(x.start) <= Date.now() && Date.parse(x.end) > Date.now());
  return (
    <section class="view stack">
      <a class="back" href="/app/oncall">
        ← On call
      </a>
      <header class="page-header">
        <div>
          <h1>{s.name}</h1>
          <p class="muted">
            {org?.name} · rotations in {s.time_zone} · times shown in your time zone
          </p>
        </div>
        {admin ? (
          <div class="page-actions row">
            <a class="button secondary" href={`/app/oncall/${orgSlug}/${s.slug}/edit`} data-testid="edit-schedule">
              Edit layers
            </a>
            <button type="button" class="secondary danger-text" onClick={() => void remove()}>
              Delete
            </button>
          </div>
        ) : null}
      </header>
      <ErrorAlert error={error ?? timeline.error} />
      <p data-testid="schedule-now">{now ? <>On call now: <strong>{now.user_name}</strong> until {whenShort(now.end)}</> : <span class="badge danger">Nobody is on call now</span>}</p>
      {s.gaps.length > 0 ? (
        <div class="alert error" role="status" data-testid="gaps">
          <strong>{s.gaps.length === 1 ? 'A gap' : `${s.gaps.length} gaps`} in the next 14 days:</strong> {s.gaps.map((g) => `${whenShort(g.start)} to ${whenShort(g.end)}`).join('; ')}
        </div>
      ) : null}
      <div class="card">{timeline.data ? <Timeline data={timeline.data} {...(admin ? { onPick: pick } : {})} /> : <Loading label="Loading the timeline" />}</div>
      <div class="detail-grid even">
        {admin ? <OverrideForm base={base} members={members.data ?? []} start={start} setStart={setStart} onAdded={reload} /> : null}
        <div class="card stack">
          <h2>Overrides in the next 14 days</h2>
          {overrides.data?.length === 0 ? <p class="muted">None.</p> : null}
          <ul class="people" data-testid="override-list">
            {overrides.data?.map((o) => (
              <li key={o.id} class="person">
                <div class="person-main">
                  <strong>{names.get(o.user_id) ?? `User ${o.user_id}`}</strong>
                  <small>
                    {whenShort(o.start)} to {whenShort(o.end)}
                  </small>
                </div>
                {admin ? (
                  <button type="button" class="ghost small danger-text" aria-label={`Remove the override of ${names.get(o.user_id) ?? o.user_id}`} onClick={() => void del(`${base}/overrides/${o.id}`).then(reload, setError)}>
                    Remove
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
          {feed.data ? (
            <div class="field">
              <span class="label">Calendar feed of this schedule (private link)</span>
              <div class="link-box">
                <code class="secret">{feed.data.url}</code>
                <CopyButton text={feed.data.url} />
              </div>
              <small>Subscribe in Google Calendar, Outlook, Apple Calendar or Thunderbird.</small>
            </div>
          ) : null}
        </div>
      </div>
    </section>
  );
}
