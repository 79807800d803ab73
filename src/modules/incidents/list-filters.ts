import { sql, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { DB, IncidentSource, IncidentStatus, Priority } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

/**
 * The dispatcher's console filters of `GET /v1/tickets` (issue 20): a text search, the source,
 * unassigned incidents, the sort order and the counts per status. Kept apart from
 * incidents.repository.ts so that file's list query stays small; it calls `whereExtras` and
 * `orderList` on its query.
 */
export type ListSort = 'newest' | 'priority' | 'sla_due';

export interface ListExtras {
  /** Case-insensitive substring of the title, description or reference (`source_ref`); `#12` or `12` also matches the id. */
  search?: string | undefined;
  /** `integration`: opened by any integration; `alert`: field alerts only (integrations' incidents have source alert too). */
  source?: IncidentSource | 'integration' | undefined;
  /** Only incidents nobody is assigned to. */
  unassigned?: boolean | undefined;
  sort?: ListSort | undefined;
}

type IncidentQuery<O> = SelectQueryBuilder<DB, 'incidents', O>;

/** Whether the `incident_counts` counters can answer a count: they know only org, mode, status and priority. */
export function hasExtras(f: ListExtras): boolean {
  return f.search !== undefined || f.source !== undefined || f.unassigned === true;
}

/** `%`, `_` and the escape character itself match literally. */
function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * `fieldAlert` says that `source` is `alert` when the caller passes a placeholder in its place (the
 * list's statements are compiled once per shape, incidents.repository.ts `listQuery`).
 */
export function whereExtras<O>(q: IncidentQuery<O>, f: ListExtras & { fieldAlert?: boolean }): IncidentQuery<O> {
  if (f.source === 'integration') q = q.where('incidents.integration_id', 'is not', null);
  else if (f.source !== undefined) {
    q = q.where('incidents.source', '=', f.source);
    if (f.fieldAlert ?? f.source === 'alert') q = q.where('incidents.integration_id', 'is', null);
  }
  if (f.unassigned === true) q = q.where('incidents.assignee_id', 'is', null);
  if (f.search !== undefined) {
    const p = likePattern(f.search);
    const id = /^#?(\d{1,9})$/.exec(f.search.trim());
    const text = sql<SqlBool>`(lower(incidents.title) like ${p} escape '\\' or lower(coalesce(incidents.description, '')) like ${p} escape '\\' or lower(coalesce(incidents.source_ref, '')) like ${p} escape '\\')`;
    q = q.where(id ? sql<SqlBool>`(${text} or incidents.id = ${Number(id[1])})` : text);
  }
  return q;
}

const PRIORITY_RANK = sql<number>`case incidents.priority when 'urgent' then 0 when 'high' then 1 when 'normal' then 2 else 3 end`;

/** newest: id descending (the spec's order); priority: urgent first, newest first within; sla_due: soonest due first. */
export function orderList<O>(q: IncidentQuery<O>, sort: ListSort | undefined): IncidentQuery<O> {
  if (sort === 'priority') return q.orderBy(PRIORITY_RANK, 'asc').orderBy('incidents.id', 'desc');
  if (sort === 'sla_due') return q.orderBy('incidents.sla_due_at', 'asc').orderBy('incidents.id', 'desc');
  return q.orderBy('incidents.id', 'desc');
}

export type StatusCounts = Record<IncidentStatus, number>;

export interface CountFilter extends ListExtras {
  priority?: Priority | undefined;
  assigneeId?: number | undefined;
  source_ref?: string | undefined;
}

/**
 * How many incidents of each status match the filters (the status filter itself aside, so the
 * counts read as tabs). Without text, source, assignee or ref filters the counters answer in a
 * few rows; otherwise one grouped count over the matching incidents.
 */
export async function countByStatus(db: Kysely<DB>, scope: Scope, f: CountFilter): Promise<StatusCounts> {
  const counts: StatusCounts = { open: 0, in_progress: 0, resolved: 0, closed: 0 };
  let rows: { status: IncidentStatus; n: number | string | bigint }[];
  if (!hasExtras(f) && f.assigneeId === undefined && f.source_ref === undefined) {
    let q = db
      .selectFrom('incident_counts')
      .select(['status', sql<number>`coalesce(sum(n), 0)`.as('n')])
      .$call(scoped(scope, 'incident_counts'))
      .groupBy('status');
    if (f.priority) q = q.where('priority', '=', f.priority);
    rows = await q.execute();
  } else {
    let q = db
      .selectFrom('incidents')
      .select(['incidents.status', (eb) => eb.fn.countAll<number>().as('n')])
      .$call(scoped(scope, 'incidents'))
      .groupBy('incidents.status');
    if (f.priority) q = q.where('incidents.priority', '=', f.priority);
    if (f.assigneeId !== undefined) q = q.where('incidents.assignee_id', '=', f.assigneeId);
    if (f.source_ref !== undefined) q = q.where('incidents.source_ref', '=', f.source_ref);
    rows = await whereExtras(q, f).execute();
  }
  for (const r of rows) counts[r.status] = Number(r.n);
  return counts;
}
