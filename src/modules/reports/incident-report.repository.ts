// The incident report's SQL (issue #39): one statement over the incidents opened in a range,
// grouped and aggregated in the database, on SQLite and on PostgreSQL alike. Percentiles are
// nearest-rank (the value at rank ceil(p * n) of the n values in order), by window functions.
import { sql, type RawBuilder } from 'kysely';
import type { Database, DialectName as Dialect } from '../../db/database.js';

export type Grouping = 'day' | 'week' | 'month' | 'priority' | 'source' | 'integration' | 'assignee' | 'team';

/** A stretch of time with one UTC offset in the report's zone: from `from` (ISO, inclusive) on, `minutes` ahead of UTC. */
export interface OffsetSpan {
  from: string;
  minutes: number;
}

export interface ReportQuery {
  orgId: number;
  livemode: 0 | 1;
  /** ISO instants, [from, to). */
  from: string;
  to: string;
  /** Now: an SLA counts once it came due by then (or was met before it did). */
  dueBy: string;
  group: Grouping;
  /** The zone's offsets over the range, in order (the first from `from`); for day, week and month. */
  offsets: OffsetSpan[];
}

export interface ReportRow {
  key: string | null;
  incidents: number;
  acknowledged: number;
  resolved: number;
  reopened: number;
  escalated: number;
  sla_due: number;
  sla_met: number;
  mtta_mean: number | null;
  mtta_p50: number | null;
  mtta_p90: number | null;
  mttr_mean: number | null;
  mttr_p50: number | null;
  mttr_p90: number | null;
}

/** Seconds from `a` to `b`, two ISO text columns (the on-call report's MTTA too). */
export function seconds(dialect: Dialect, a: string, b: string): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`extract(epoch from (${sql.ref(b)}::timestamptz - ${sql.ref(a)}::timestamptz))::float8`
    : sql<number>`(julianday(${sql.ref(b)}) - julianday(${sql.ref(a)})) * 86400.0`;
}

/** The local wall time of `created_at` as 'YYYY-MM-DD...' text, by the offset in force then. */
function localTime(dialect: Dialect, offsets: OffsetSpan[]): RawBuilder<string> {
  const shift = (minutes: number) =>
    dialect === 'postgres'
      ? sql`to_char((i.created_at::timestamptz at time zone 'UTC') + make_interval(mins => ${sql.lit(minutes)}), 'YYYY-MM-DD')`
      : sql`date(i.created_at, ${`${minutes >= 0 ? '+' : ''}${minutes} minutes`})`;
  if (offsets.length === 1) return sql<string>`${shift(offsets[0]!.minutes)}`;
  const whens = offsets.slice(1).map((o, n) => sql`when i.created_at < ${o.from} then ${shift(offsets[n]!.minutes)}`);
  return sql<string>`(case ${sql.join(whens, sql` `)} else ${shift(offsets.at(-1)!.minutes)} end)`;
}

/** The group key of each incident, as text (null: none, e.g. unassigned). */
function keyOf(dialect: Dialect, q: ReportQuery): RawBuilder<string | null> {
  const day = localTime(dialect, q.offsets);
  switch (q.group) {
    case 'day':
      return day;
    case 'month':
      return sql<string>`substr(${day}, 1, 7)`;
    case 'week':
      // The Monday on or before the local day.
      return dialect === 'postgres'
        ? sql<string>`to_char(date_trunc('week', (${day})::date), 'YYYY-MM-DD')`
        : sql<string>`date(${day}, '-6 days', 'weekday 1')`;
    case 'priority':
      return sql<string>`i.priority`;
    case 'source':
      return sql<string>`i.source`;
    case 'integration':
      return sql<string | null>`cast(i.integration_id as text)`;
    case 'assignee':
      return sql<string | null>`cast(i.assignee_id as text)`;
    case 'team':
      return sql<string | null>`cast(tm.team_id as text)`;
  }
}

/**
 * The report's rows, one per key that has incidents, and the totals (key `*`), in one statement.
 * By team, an incident counts in each team its assignee is an active member of (none: key null).
 */
export async function incidentReport(database: Database, q: ReportQuery): Promise<{ rows: ReportRow[]; totals: ReportRow }> {
  // By team an incident may count in several rows: its totals come from a grouping that counts it once.
  if (q.group === 'team') return { rows: (await report(database, q)).rows, totals: (await report(database, { ...q, group: 'source' })).totals };
  return report(database, q);
}

/** A long read (Database.longRead): on SQLite off the event loop, in a worker thread. */
async function report(database: Database, q: ReportQuery): Promise<{ rows: ReportRow[]; totals: ReportRow }> {
  const result = await database.longRead(incidentReportSql(database.dialect, q).compile(database.db));
  const rows = result.map(({ k, ...r }) => ({ ...numbers(r), key: k }));
  return { rows: rows.filter((r) => r.key !== '*'), totals: rows.find((r) => r.key === '*') ?? { ...empty(), key: '*' } };
}

/** The statement of one report (the totals under key `*`, but by team); its plan is checked by the report's test. */
export function incidentReportSql(dialect: Dialect, q: ReportQuery): RawBuilder<ReportRow & { k: string | null }> {
  const key = keyOf(dialect, q);
  const teamJoin = q.group === 'team' ? sql`left join team_members tm on tm.user_id = i.assignee_id and tm.active = 1 and tm.team_id in (select id from teams where org_id = ${q.orgId})` : sql``;
  const done = sql`i.status in ('resolved', 'closed')`;
  const totals = q.group === 'team' ? sql`1 = 0` : sql`1 = 1`;
  // Each incident's figures are computed once (`base`, materialized on both engines: SQLite would
  // otherwise inline it into every use). The counts and means come from one grouping; each
  // percentile from one sort of the values (per key, and over all for the totals), whose ranks are
  // matched to the count of the key: no window counts its partition (on SQLite that was a sort more).
  // Keys are joined as `jk`, never null ('' for none: no key is empty), so that both engines join by
  // equality (a hash join, an automatic index) rather than row by row.
  const ranked = (col: 'mtta' | 'mttr') => sql`
    select coalesce(k, '') as jk, ${sql.ref(col)} as v, row_number() over (partition by k order by ${sql.ref(col)}) as rn from base where ${sql.ref(col)} is not null
    union all
    select '*', ${sql.ref(col)}, row_number() over (order by ${sql.ref(col)}) from base where ${sql.ref(col)} is not null and ${totals}`;
  const percentiles = (from: string, n: 'na' | 'nr') => sql`
    select x.jk, max(case when x.rn = (agg.${sql.raw(n)} + 1) / 2 then x.v end) as p50, max(case when x.rn = (9 * agg.${sql.raw(n)} + 9) / 10 then x.v end) as p90
    from ${sql.raw(from)} x inner join agg on agg.jk = x.jk
    where x.rn = (agg.${sql.raw(n)} + 1) / 2 or x.rn = (9 * agg.${sql.raw(n)} + 9) / 10
    group by x.jk`;
  const aggregate = (k: RawBuilder<unknown>, jk: RawBuilder<unknown>) => sql`${k} as k, ${jk} as jk, count(*) as incidents, sum(case when acked then 1 else 0 end) as acknowledged, sum(done) as resolved,
        sum(reopened) as reopened, sum(escalated) as escalated, sum(sla_due) as sla_due, sum(sla_met) as sla_met,
        count(mtta) as na, avg(mtta) as mtta_mean, count(mttr) as nr, avg(mttr) as mttr_mean`;
  return sql<ReportRow & { k: string | null }>`
    with base as materialized (
      select ${key} as k,
        i.first_acknowledged_at is not null as acked,
        case when ${done} then 1 else 0 end as done,
        case when i.reopened_count > 0 then 1 else 0 end as reopened,
        case when i.escalated_at is not null then 1 else 0 end as escalated,
        case when i.sla_due_at <= ${q.dueBy} or (${done} and i.resolved_at <= i.sla_due_at) then 1 else 0 end as sla_due,
        case when ${done} and i.resolved_at <= i.sla_due_at then 1 else 0 end as sla_met,
        case when i.first_acknowledged_at is not null then ${seconds(dialect, 'i.created_at', 'i.first_acknowledged_at')} end as mtta,
        case when ${done} then ${seconds(dialect, 'i.created_at', 'i.resolved_at')} end as mttr
      from incidents i ${teamJoin}
      where i.org_id = ${q.orgId} and i.livemode = ${q.livemode} and i.created_at >= ${q.from} and i.created_at < ${q.to}
    ),
    agg as materialized (
      select ${aggregate(sql`k`, sql`coalesce(k, '')`)} from base group by k
      union all
      select ${aggregate(sql`'*'`, sql`'*'`)} from base where ${totals}
    ),
    a as (${ranked('mtta')}),
    r as (${ranked('mttr')}),
    ap as (${percentiles('a', 'na')}),
    rp as (${percentiles('r', 'nr')})
    select agg.k, agg.incidents, agg.acknowledged, agg.resolved, agg.reopened, agg.escalated, agg.sla_due, agg.sla_met,
      agg.mtta_mean, ap.p50 as mtta_p50, ap.p90 as mtta_p90, agg.mttr_mean, rp.p50 as mttr_p50, rp.p90 as mttr_p90
    from agg left join ap on ap.jk = agg.jk left join rp on rp.jk = agg.jk
  `;
}

const COUNTS = ['incidents', 'acknowledged', 'resolved', 'reopened', 'escalated', 'sla_due', 'sla_met'] as const;
const TIMES = ['mtta_mean', 'mtta_p50', 'mtta_p90', 'mttr_mean', 'mttr_p50', 'mttr_p90'] as const;

/** PostgreSQL answers counts as text (bigint) and SQLite booleans as 0/1: every figure as a number. */
function numbers(r: Omit<ReportRow, 'key'>): Omit<ReportRow, 'key'> {
  const out = { ...r };
  for (const c of COUNTS) out[c] = Number(r[c] ?? 0);
  for (const t of TIMES) out[t] = r[t] === null || r[t] === undefined ? null : Number(r[t]);
  return out;
}

function empty(): Omit<ReportRow, 'key'> {
  return { incidents: 0, acknowledged: 0, resolved: 0, reopened: 0, escalated: 0, sla_due: 0, sla_met: 0, mtta_mean: null, mtta_p50: null, mtta_p90: null, mttr_mean: null, mttr_p50: null, mttr_p90: null };
}
