// On call: every schedule of the orgs in view, with who is on call now and next.
import { get } from '../../../lib/api';
import { useSession } from '../../session';
import type { Org, OrgOnCall, Shift } from '../../types';
import { Empty, ErrorAlert, Loading, PageHeader, useAsync } from '../../ui';

export const whenShort = (iso: string) => new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit', day: 'numeric', month: 'short' }).format(new Date(iso));

export function Who({ shift, label }: { shift: Shift | undefined; label: 'now' | 'next' }) {
  if (!shift) return label === 'now' ? <span class="badge danger" data-testid="nobody">Nobody on call</span> : <span class="muted">Nobody next</span>;
  return label === 'now' ? (
    <span data-testid="on-call-now">
      <strong>{shift.user_name}</strong> <span class="muted">until {whenShort(shift.end)}</span>
    </span>
  ) : (
    <span>
      {shift.user_name} <span class="muted">from {whenShort(shift.start)}</span>
    </span>
  );
}

function OrgSchedules({ org }: { org: Org }) {
  const base = `/v1/orgs/${encodeURIComponent(org.slug)}`;
  const list = useAsync(() => get<OrgOnCall>(`${base}/on-call`), [org.slug]);
  const admin = org.role === 'owner' || org.role === 'admin';
  return (
    <section class="stack" aria-labelledby={`oncall-${org.id}`}>
      <div class="row">
        <h2 id={`oncall-${org.id}`}>{org.name}</h2>
        <span class="spacer" />
        {admin && !org.locked ? (
          <a class="button secondary small" href={`/app/oncall/${org.slug}/new`} data-testid="new-schedule">
            New schedule
          </a>
        ) : null}
      </div>
      <ErrorAlert error={list.error} />
      {list.loading && !list.data ? <Loading label="Loading schedules" /> : null}
      {list.data && list.data.schedules.length === 0 ? <Empty title="No schedules yet">{admin ? 'Create one to say who is on call when.' : 'An admin of this organization can create one.'}</Empty> : null}
      <ul class="cards" data-testid="schedule-list">
        {list.data?.schedules.map((s) => (
          <li key={s.id}>
            <a class="card org-card" href={`/app/oncall/${org.slug}/${s.slug}`} data-testid="schedule-card">
              <h3>{s.name}</h3>
              <p>
                Now: <Who shift={s.on_call[0]} label="now" />
              </p>
              <p>
                Next: <Who shift={s.next[0]} label="next" />
              </p>
              <small class="muted">{s.time_zone}</small>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function OnCallView() {
  const { orgs, orgId } = useSession();
  const shown = orgs.filter((o) => orgId === null || o.id === orgId);
  return (
    <section class="view stack">
      <PageHeader title="On call" sub="Who is on duty now and next in each schedule. Times in your time zone." />
      {shown.map((o) => (
        <OrgSchedules key={o.id} org={o} />
      ))}
    </section>
  );
}
