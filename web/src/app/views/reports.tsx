// Reports (issue #39): an org's incident report as two charts, a table and totals, the on-call
// report as a table per person, and both as CSV downloads. The period, grouping and zone live in
// the address (?from=&to=&group=&tz=), so a report can be bookmarked and shared. Admins and owners
// only (the API answers others 403; the navigation shows the page to those who administer an org).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, pageHeaders, qs } from '../../lib/api';
import { browserZone, formatDateTime } from '../../lib/format';
import { navigate, setQuery, type Loc } from '../router';
import { administeredOrgs, useSession, viewingTestData } from '../session';
import { isKnownZone, TimeZoneInput } from '../timezone-input';
import type * as api from '../../../../clients/typescript/schema.js';
import { Empty, ErrorAlert, Loading, PageHeader, PRIORITY_LABEL, SOURCE_LABEL, useAsync } from '../ui';
import { BarLineChart, type Axis } from './report-charts';
import { duration } from './report-scale';
import { isDay, PRESETS, presetRange, rangeQuery, today } from './report-dates';

type IncidentReport = api.IncidentReport;
type IncidentRow = api.IncidentReportRow;

/** The on-call report (docs/api.md "Reports"): its MTTA is a mean, not a median. */
export type OncallReport = api.OncallReport;
export type OncallRow = api.OncallReportRow;

export const GROUPS = [
  { id: 'day', label: 'Day', heading: 'Day' },
  { id: 'week', label: 'Week', heading: 'Week' },
  { id: 'month', label: 'Month', heading: 'Month' },
  { id: 'priority', label: 'Priority', heading: 'Priority' },
  { id: 'source', label: 'Source', heading: 'Source' },
  { id: 'integration', label: 'Integration', heading: 'Integration' },
  { id: 'assignee', label: 'Assignee', heading: 'Assignee' },
  { id: 'team', label: 'Team', heading: 'Team' },
] as const;
type Group = (typeof GROUPS)[number]['id'];
const isPeriod = (g: Group) => g === 'day' || g === 'week' || g === 'month';
const NONE_LABEL: Partial<Record<Group, string>> = { integration: 'No integration', assignee: 'Unassigned', team: 'No team', source: 'No source', priority: 'No priority' };


// ---- numbers in words -------------------------------------------------------------------------

const percent = (v: number | null | undefined) => (v === null || v === undefined ? '–' : `${v} %`);
const hours = (h: number) => `${Math.round(h * 10) / 10} h`;

const utcDate = (key: string) => new Date(`${key.length === 7 ? `${key}-01` : key}T00:00:00Z`);
const fmt = (o: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat(undefined, { ...o, timeZone: 'UTC' });
const short = (s: string) => (s.length > 11 ? `${s.slice(0, 10)}…` : s);

/** The row's name on the x axis (short) and in tables (full). */
export function rowLabel(group: Group, row: Pick<IncidentRow, 'key' | 'label'>): { short: string; full: string } {
  const key = row.key;
  if (key === null) {
    const none = NONE_LABEL[group] ?? 'None';
    return { short: short(none), full: none };
  }
  if (group === 'day') return { short: fmt({ day: 'numeric', month: 'short' }).format(utcDate(key)), full: fmt({ weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }).format(utcDate(key)) };
  if (group === 'week') return { short: fmt({ day: 'numeric', month: 'short' }).format(utcDate(key)), full: `Week of ${fmt({ weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }).format(utcDate(key))}` };
  if (group === 'month') return { short: fmt({ month: 'short', year: '2-digit' }).format(utcDate(key)), full: fmt({ month: 'long', year: 'numeric' }).format(utcDate(key)) };
  const name = group === 'priority' ? (PRIORITY_LABEL[key] ?? key) : group === 'source' ? (SOURCE_LABEL[key] ?? key) : (row.label ?? `#${key}`);
  return { short: short(name), full: name };
}

// ---- the pages ----------------------------------------------------------------------------------

/** /app/reports: the report of the org in view (the switcher's, else the first one administered). */
export function ReportsIndex({ loc }: { loc: Loc }) {
  const { orgs, orgId } = useSession();
  const mine = administeredOrgs(orgs, orgId);
  const pick = mine.find((o) => !o.personal) ?? mine[0];
  useEffect(() => {
    if (pick) navigate(`/app/reports/${encodeURIComponent(pick.slug)}${loc.query.toString() ? `?${loc.query.toString()}` : ''}`, { replace: true });
  }, [pick?.slug]);
  if (pick) return <Loading label="Opening the report" />;
  return (
    <section class="view">
      <PageHeader title="Reports" />
      <Empty title="Reports are for admins and owners">Ask an owner of your organization to make you an admin to see its reports.</Empty>
    </section>
  );
}

/** The settings of the page as the address holds them, with the defaults filled in. */
function settingsOf(loc: Loc) {
  const tzRaw = loc.query.get('tz');
  const tz = tzRaw && isKnownZone(tzRaw) ? tzRaw : browserZone();
  const groupRaw = loc.query.get('group');
  const group: Group = GROUPS.some((g) => g.id === groupRaw) ? (groupRaw as Group) : 'day';
  const fallback = presetRange('30d', today(tz));
  const from = isDay(loc.query.get('from')) ? loc.query.get('from')! : fallback.from;
  const to = isDay(loc.query.get('to')) ? loc.query.get('to')! : fallback.to;
  return { tz, group, from, to };
}

/** A CSV link: the session cookie authenticates it; in "View test data" it is fetched with the test-mode header instead. */
function CsvLink({ href, name, testid }: { href: string; name: string; testid: string }) {
  const [error, setError] = useState<unknown>(null);
  const onClick = async (e: MouseEvent) => {
    // A link cannot carry a header: with test data in view, fetch with it and save the answer.
    if (!viewingTestData()) return;
    e.preventDefault();
    setError(null);
    try {
      const res = await fetch(href, { headers: { ...pageHeaders, accept: 'text/csv' }, credentials: 'same-origin' });
      if (!res.ok) throw new ApiError(res.status, { error: `Download failed (HTTP ${res.status})` });
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'report.csv';
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <a class="button secondary small" href={href} download data-testid={testid} onClick={(e) => void onClick(e)}>
        Download CSV<span class="sr-only"> of {name}</span>
      </a>
      {error ? <ErrorAlert error={error} /> : null}
    </>
  );
}

export function ReportsView({ slug, loc }: { slug: string; loc: Loc }) {
  const { orgs, orgId } = useSession();
  const org = orgs.find((o) => o.slug === slug);
  const mine = administeredOrgs(orgs, null);
  const { tz, group, from, to } = settingsOf(loc);
  const [zone, setZone] = useState(tz);
  useEffect(() => setZone(tz), [tz]);
  // The sidebar's organization switcher moves the page to the org chosen, when it is one administered.
  useEffect(() => {
    const chosen = orgs.find((o) => o.id === orgId);
    if (chosen && chosen.slug !== slug && administeredOrgs([chosen], null).length > 0) navigate(`/app/reports/${encodeURIComponent(chosen.slug)}${location.search}`, { replace: true });
  }, [orgId]);

  const backwards = to < from;
  const range = backwards ? null : rangeQuery(from, to, tz);
  const base = `/v1/orgs/${encodeURIComponent(slug)}/reports`;
  const incidentQuery = range ? qs({ from: range.from, to: range.to, group_by: group, tz }) : '';
  const oncallQuery = range ? qs({ from: range.from, to: range.to, tz }) : '';
  const incidents = useAsync(() => (range ? get<IncidentReport>(`${base}/incidents${incidentQuery}`) : Promise.resolve(undefined)), [base, incidentQuery]);
  // The on-call report does not depend on the grouping: switching it asks for the incidents only.
  const oncall = useAsync(() => (range ? get<OncallReport>(`${base}/oncall${oncallQuery}`) : Promise.resolve(undefined)), [base, oncallQuery]);

  const todayIs = today(tz);
  const preset = PRESETS.find((p) => {
    const r = presetRange(p.id, todayIs);
    return r.from === from && r.to === to;
  });
  const groupInfo = GROUPS.find((g) => g.id === group)!;
  const rangeText = `${fmt({ day: 'numeric', month: 'short', year: 'numeric' }).format(utcDate(from))} to ${fmt({ day: 'numeric', month: 'short', year: 'numeric' }).format(utcDate(to))}`;
  const forbidden = incidents.error instanceof ApiError && (incidents.error.status === 403 || incidents.error.status === 404);

  return (
    <section class="view reports">
      <PageHeader title="Reports" sub={`${org?.name ?? slug}: incidents opened and on-call duty, ${rangeText} (${tz}).`}>
        {mine.length > 1 ? (
          <div class="field inline-field">
            <label for="report-org">Organization</label>
            <select id="report-org" class="compact" value={slug} data-testid="report-org" onChange={(e) => navigate(`/app/reports/${encodeURIComponent(e.currentTarget.value)}${location.search}`)}>
              {mine.map((o) => (
                <option key={o.id} value={o.slug}>
                  {o.name}
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </PageHeader>

      <form class="filters card report-filters" aria-label="Report settings" onSubmit={(e) => e.preventDefault()} data-testid="report-settings">
        <div class="field presets">
          <span class="label" id="report-presets">
            Period
          </span>
          <div class="preset-row" role="group" aria-labelledby="report-presets">
            {PRESETS.map((p) => (
              <button key={p.id} type="button" class={`status-tab${preset?.id === p.id ? ' current' : ''}`} aria-pressed={preset?.id === p.id} data-preset={p.id} onClick={() => setQuery(presetRange(p.id, todayIs))}>
                {p.label}
              </button>
            ))}
          </div>
        </div>
        <div class="field">
          <label for="report-from">From</label>
          <input id="report-from" name="from" type="date" value={from} max={to} required onChange={(e) => isDay(e.currentTarget.value) && setQuery({ from: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="report-to">To (included)</label>
          <input id="report-to" name="to" type="date" value={to} min={from} required onChange={(e) => isDay(e.currentTarget.value) && setQuery({ to: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="report-group">Group by</label>
          <select id="report-group" name="group_by" value={group} data-testid="report-group" onChange={(e) => setQuery({ group: e.currentTarget.value === 'day' ? undefined : e.currentTarget.value })}>
            {GROUPS.map((g) => (
              <option key={g.id} value={g.id}>
                {g.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="report-tz">Time zone</label>
          <TimeZoneInput
            id="report-tz"
            name="tz"
            value={zone}
            onInput={(v) => {
              setZone(v);
              if (isKnownZone(v.trim())) setQuery({ tz: v.trim() === browserZone() ? undefined : v.trim() });
            }}
          />
        </div>
        {backwards ? (
          <div class="alert error" role="alert" data-testid="form-error">
            The last day comes before the first: choose a “To” date on or after the “From” date.
          </div>
        ) : (
          <ErrorAlert error={forbidden ? null : incidents.error} />
        )}
      </form>

      {forbidden ? (
        <Empty title="No report for you here">Reports of an organization are for its admins and owners.</Empty>
      ) : (
        <>
          {incidents.loading && !incidents.data ? <Loading label="Loading the report" /> : null}
          {incidents.data ? <IncidentPart report={incidents.data} group={group} heading={groupInfo.heading} csv={`${base}/incidents${incidentQuery.replace(/^\?/, '?format=csv&')}`} busy={incidents.loading} /> : null}
          <OncallPart state={oncall} csv={`${base}/oncall${oncallQuery.replace(/^\?/, '?format=csv&')}`} />
        </>
      )}
    </section>
  );
}

function Totals({ t }: { t: IncidentRow }) {
  const items: [string, string, string][] = [
    ['incidents', 'Incidents', String(t.incidents)],
    ['acknowledged', 'Acknowledged', String(t.acknowledged)],
    ['resolved', 'Resolved', String(t.resolved)],
    ['mtta', 'MTTA (median)', duration(t.mtta_seconds.p50)],
    ['mttr', 'MTTR (median)', duration(t.mttr_seconds.p50)],
    ['sla', 'SLA met', percent(t.sla_met_percent)],
    ['escalated', 'Escalated', percent(t.escalated_percent)],
    ['reopened', 'Reopened', String(t.reopened)],
  ];
  return (
    <dl class="stat-tiles" data-testid="report-totals">
      {items.map(([id, label, value]) => (
        <div key={id} class="stat" data-stat={id}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** When the figures are of: now, or a stored answer's instant for a report that takes long (docs/reports.md, "Stored answers"). */
function AsOf({ iso }: { iso: string }) {
  return (
    <p class="muted" data-testid="report-as-of">
      Figures as of <time dateTime={iso}>{formatDateTime(iso)}</time>
    </p>
  );
}

function IncidentPart({ report, group, heading, csv, busy }: { report: IncidentReport; group: Group; heading: string; csv: string; busy: boolean }) {
  const labels = report.rows.map((r) => rowLabel(group, r));
  const most = Math.max(0, ...report.rows.map((r) => r.incidents));
  const slowest = Math.max(0, ...report.rows.flatMap((r) => [r.mtta_seconds.p50 ?? 0, r.mttr_seconds.p50 ?? 0]));
  const counts: Axis = { max: most, kind: 'count', format: (v) => String(v) };
  const percents: Axis = { max: 100, kind: 'percent', format: (v) => `${v} %` };
  const times: Axis = { max: slowest, kind: 'duration', format: duration };
  const per = isPeriod(group) ? `per ${group}` : `by ${group}`;
  const zoneNote =
    group === 'day' ? `Days cut at midnight in ${report.tz}.` : group === 'week' ? `Weeks from Monday, cut at midnight in ${report.tz}.` : group === 'month' ? `Months cut at midnight in ${report.tz}.` : `The incidents opened in the period, ${per}.`;
  return (
    <div class="stack report-incidents" aria-busy={busy} data-testid="incident-report" data-group={report.group_by}>
      <Totals t={report.totals} />
      <AsOf iso={report.as_of} />
      {report.rows.length === 0 ? (
        <Empty title="No incidents in this period">Nothing was opened between these dates.</Empty>
      ) : (
        <div class="chart-grid">
          <BarLineChart
            id="chart-incidents"
            title={`Incidents and SLA met ${per}`}
            note={zoneNote}
            labels={labels}
            keyHeading={heading}
            bar={{ label: 'Incidents', values: report.rows.map((r) => r.incidents) }}
            lines={[{ label: 'SLA met', values: report.rows.map((r) => r.sla_met_percent), marker: 'diamond', dashed: true, color: '#047857', axis: 'right' }]}
            left={counts}
            right={percents}
            joined={isPeriod(group)}
          />
          <BarLineChart
            id="chart-times"
            title={`Time to acknowledge and resolve (median) ${per}`}
            note="MTTA and MTTR, the median (p50) of the incidents opened in each."
            labels={labels}
            keyHeading={heading}
            lines={[
              { label: 'MTTA p50', values: report.rows.map((r) => r.mtta_seconds.p50), marker: 'circle', color: '#1d4ed8', axis: 'left' },
              { label: 'MTTR p50', values: report.rows.map((r) => r.mttr_seconds.p50), marker: 'square', dashed: true, color: '#b45309', axis: 'left' },
            ]}
            left={times}
            joined={isPeriod(group)}
          />
        </div>
      )}
      <section class="card stack" aria-labelledby="incident-table-title">
        <div class="row">
          <h2 id="incident-table-title">Incidents {per}</h2>
          <span class="spacer" />
          <CsvLink href={csv} name="the incident report" testid="incident-csv" />
        </div>
        <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="incident-table-title">
          <table class="report-table" data-testid="incident-table">
            <thead>
              <tr>
                <th scope="col">{heading}</th>
                <th scope="col">Incidents</th>
                <th scope="col">Acknowledged</th>
                <th scope="col">Resolved</th>
                <th scope="col">
                  MTTA <small>p50 / p90</small>
                </th>
                <th scope="col">
                  MTTR <small>p50 / p90</small>
                </th>
                <th scope="col">SLA met</th>
                <th scope="col">Escalated</th>
                <th scope="col">Reopened</th>
              </tr>
            </thead>
            <tbody>
              {report.rows.map((r, i) => (
                <IncidentTableRow key={`${r.key}`} row={r} name={labels[i]!.full} />
              ))}
            </tbody>
            <tfoot>
              <IncidentTableRow row={report.totals} name="Total" />
            </tfoot>
          </table>
        </div>
      </section>
    </div>
  );
}

function IncidentTableRow({ row, name }: { row: IncidentRow; name: string }) {
  return (
    <tr data-key={row.key ?? ''}>
      <th scope="row">{name}</th>
      <td data-col="incidents">{row.incidents}</td>
      <td data-col="acknowledged">{row.acknowledged}</td>
      <td data-col="resolved">{row.resolved}</td>
      <td data-col="mtta">
        {duration(row.mtta_seconds.p50)} / {duration(row.mtta_seconds.p90)}
      </td>
      <td data-col="mttr">
        {duration(row.mttr_seconds.p50)} / {duration(row.mttr_seconds.p90)}
      </td>
      <td data-col="sla">{percent(row.sla_met_percent)}</td>
      <td data-col="escalated">{percent(row.escalated_percent)}</td>
      <td data-col="reopened">{row.reopened}</td>
    </tr>
  );
}

function OncallPart({ state, csv }: { state: { data: OncallReport | undefined; error: unknown; loading: boolean }; csv: string }) {
  const report = state.data;
  return (
    <section class="card stack" aria-labelledby="oncall-table-title" data-testid="oncall-report" aria-busy={state.loading}>
      <div class="row">
        <h2 id="oncall-table-title">On call, per person</h2>
        <span class="spacer" />
        {report ? <CsvLink href={csv} name="the on-call report" testid="oncall-csv" /> : null}
      </div>
      <ErrorAlert error={state.error} />
      {state.loading && !report ? <Loading label="Loading the on-call report" /> : null}
      {report && report.rows.length === 0 ? <p class="muted">Nobody was on call or paged in this period.</p> : null}
      {report && report.rows.length > 0 ? (
        <div class="table-wrap" tabIndex={0} role="region" aria-labelledby="oncall-table-title">
          <table class="report-table" data-testid="oncall-table">
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Hours on call</th>
                <th scope="col">Pages</th>
                <th scope="col">At night</th>
                <th scope="col">On weekends</th>
                <th scope="col">Acknowledged</th>
                <th scope="col">
                  MTTA <small>mean</small>
                </th>
                <th scope="col">Escalated past</th>
              </tr>
            </thead>
            <tbody>
              {report.rows.map((r) => (
                <OncallTableRow key={r.user_id} row={r} />
              ))}
            </tbody>
            <tfoot>
              <OncallTableRow row={report.totals} total />
            </tfoot>
          </table>
        </div>
      ) : null}
      {report && report.rows.length > 0 ? (
        <p class="muted small-print">At night: 22:00 to 07:00; on weekends: Saturday and Sunday; each on the person’s own clock. MTTA: the mean time from a page to its acknowledgement.</p>
      ) : null}
    </section>
  );
}

function OncallTableRow({ row, total }: { row: OncallRow; total?: boolean }) {
  return (
    <tr data-user={row.user_id ?? ''}>
      <th scope="row">
        {total ? 'Total' : (row.name ?? `#${row.user_id}`)}
        {!total && row.timezone ? <small class="muted block">{row.timezone}</small> : null}
      </th>
      <td data-col="hours">{hours(row.hours_on_call)}</td>
      <td data-col="pages">{row.pages}</td>
      <td data-col="night">{row.night_pages}</td>
      <td data-col="weekend">{row.weekend_pages}</td>
      <td data-col="acknowledged">{row.acknowledged}</td>
      <td data-col="mtta">{duration(row.mtta_seconds)}</td>
      <td data-col="escalated">{row.escalated_past}</td>
    </tr>
  );
}
