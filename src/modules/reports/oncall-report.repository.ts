// The on-call report's SQL (issue #39): the pages of an org and mode in a range, counted per person
// in the database, on SQLite and on PostgreSQL alike. A page is a row of paging_pages (one person
// paged for one incident, by a level of its policy or by hand), whatever number of notifications
// it sent. Definitions, with a worked example, in docs/reports.md.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, DialectName as Dialect } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { seconds, type OffsetSpan } from './incident-report.repository.js';

export interface PagesQuery {
  orgId: number;
  livemode: 0 | 1;
  /** ISO instants, [from, to). */
  from: string;
  to: string;
}

/** A person's zone with its offsets over the range, in order (the first from `from`). */
export interface ZoneOffsets {
  zone: string;
  offsets: OffsetSpan[];
}

export interface PageFigures {
  user_id: number;
  pages: number;
  night_pages: number;
  weekend_pages: number;
  acknowledged: number;
  /** The sum of the acknowledged pages' seconds to acknowledgement (their mean is this over `acknowledged`). */
  mtta_sum: number;
  escalated_past: number;
}

/** The time zones (as users hold them) of the people paged in the range: the zones whose offsets the figures need. */
export async function pagedZones(db: Kysely<DB>, q: PagesQuery): Promise<string[]> {
  const rows = await db
    .selectFrom('paging_pages as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .select('u.timezone')
    .distinct()
    .where('p.org_id', '=', q.orgId)
    .where('p.livemode', '=', q.livemode)
    .where('p.created_at', '>=', q.from)
    .where('p.created_at', '<', q.to)
    .execute();
  return rows.map((r) => r.timezone);
}

/**
 * Each zone's offsets as rows (zone_name, start_at, end_at, offset_minutes): a page takes the offset of the
 * span it falls in. ISO text compares in time order, as created_at is stored.
 */
function zoneRows(zones: readonly ZoneOffsets[], to: string) {
  return zones.flatMap((z) =>
    z.offsets.map((o, n) => sql`(cast(${z.zone} as text), cast(${o.from} as text), cast(${z.offsets[n + 1]?.from ?? to} as text), ${sql.lit(o.minutes)})`),
  );
}

/** The local hour (0-23) and weekday (0 Sunday .. 6 Saturday) of `created_at` shifted by `offset_minutes`. */
function localParts(dialect: Dialect) {
  if (dialect === 'postgres') {
    const local = sql`((created_at::timestamptz at time zone 'UTC') + make_interval(mins => offset_minutes))`;
    return { hour: sql<number>`extract(hour from ${local})`, dow: sql<number>`extract(dow from ${local})` };
  }
  const shift = sql`offset_minutes || ' minutes'`;
  return { hour: sql<number>`cast(strftime('%H', created_at, ${shift}) as integer)`, dow: sql<number>`cast(strftime('%w', created_at, ${shift}) as integer)` };
}

/**
 * Per person paged in the range: pages, those at night (22:00 to 07:00) and on a weekend (Saturday,
 * Sunday) in the person's own zone, those acknowledged by them (with the seconds it took), and those
 * an escalation moved past without their acknowledgement. One statement; `zones` must hold every
 * zone `pagedZones` answered (a page whose person's zone is not there is not counted).
 *
 * - A page's acknowledgement is the person's first `acknowledged` event on the incident at or after
 *   the page and before their next page of the same incident (a later one answers that page).
 * - An escalation moved past a page of a level when the incident's next `escalated` (the next level
 *   or round, by the walk or by hand) or `escalation_exhausted` event came after it, before the
 *   person's acknowledgement (or with none). A page by hand (no level) is never moved past.
 */
export async function pageFigures(database: Database, q: PagesQuery, zones: readonly ZoneOffsets[]): Promise<PageFigures[]> {
  if (zones.length === 0) return [];
  // A long read (Database.longRead): on SQLite off the event loop, in a worker thread.
  const rows = await database.longRead(pageFiguresSql(database.dialect, q, zones).compile(database.db));
  // PostgreSQL answers counts (bigint) as text: every figure as a number.
  return rows.map((r) => ({
    user_id: Number(r.user_id),
    pages: Number(r.pages),
    night_pages: Number(r.night_pages),
    weekend_pages: Number(r.weekend_pages),
    acknowledged: Number(r.acknowledged),
    mtta_sum: Number(r.mtta_sum),
    escalated_past: Number(r.escalated_past),
  }));
}

/** The statement of pageFigures (`zones` not empty); its plan is checked by the report's test. */
export function pageFiguresSql(dialect: Dialect, q: PagesQuery, zones: readonly ZoneOffsets[]): RawBuilder<PageFigures> {
  const { hour, dow } = localParts(dialect);
  // `materialized` (both engines): each page's look-ups run once, not once for every use of their
  // result (SQLite inlines a CTE used once, copying its correlated subqueries into each use).
  return sql<PageFigures>`
    with zones (zone_name, start_at, end_at, offset_minutes) as (values ${sql.join(zoneRows(zones, q.to))}),
    paged as materialized (
      select p.incident_id, p.user_id, p.level, p.created_at, z.offset_minutes,
        (select min(n.created_at) from paging_pages n
          where n.incident_id = p.incident_id and n.user_id = p.user_id and (n.created_at > p.created_at or (n.created_at = p.created_at and n.id > p.id))) as next_at
      from paging_pages p
      inner join users u on u.id = p.user_id
      inner join zones z on z.zone_name = u.timezone and p.created_at >= z.start_at and p.created_at < z.end_at
      where p.org_id = ${q.orgId} and p.livemode = ${q.livemode} and p.created_at >= ${q.from} and p.created_at < ${q.to}
    ),
    answered as materialized (
      select user_id, created_at, offset_minutes,
        (select min(e.created_at) from incident_events e
          where e.incident_id = paged.incident_id and e.type = 'acknowledged' and e.actor_id = paged.user_id
            and e.created_at >= paged.created_at and (paged.next_at is null or e.created_at < paged.next_at)) as acked_at,
        case when paged.level is not null then
          (select min(e.created_at) from incident_events e
            where e.incident_id = paged.incident_id and e.type in ('escalated', 'escalation_exhausted') and e.created_at > paged.created_at) end as moved_at
      from paged
    ),
    timed as (
      select user_id, acked_at, moved_at, ${hour} as local_hour, ${dow} as local_dow,
        case when acked_at is not null then ${seconds(dialect, 'created_at', 'acked_at')} end as tta
      from answered
    )
    select user_id,
      count(*) as pages,
      sum(case when local_hour >= 22 or local_hour < 7 then 1 else 0 end) as night_pages,
      sum(case when local_dow = 0 or local_dow = 6 then 1 else 0 end) as weekend_pages,
      count(acked_at) as acknowledged,
      coalesce(sum(tta), 0) as mtta_sum,
      sum(case when moved_at is not null and (acked_at is null or acked_at > moved_at) then 1 else 0 end) as escalated_past
    from timed
    group by user_id
  `;
}
