import { CompiledQuery, sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import { ROWS_AS_ARRAYS } from '../../db/database.js';
import { compiledOnce, FixedQuery, insertRows, onSqlite, type Conflict, type Mark } from '../../db/fixed.js';
import type { DB, Flag, IncidentStatus, IncidentsTable, Priority } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';
import { writeWithNext } from '../../db/pipeline.js';
import { beforeCommit } from '../../db/transaction.js';
import { hasExtras, orderList, whereExtras, type ListExtras } from './list-filters.js';

export type IncidentRow = Selectable<IncidentsTable>;
/** Dispatch state starts empty unless a caller sets it (the escalation deadline). */
type DispatchFields = 'acknowledged_at' | 'acknowledged_by' | 'escalation_level' | 'escalation_loop' | 'escalate_at' | 'escalation_policy_id' | 'escalation_snapshot';
/** Kept by recordTimeline for reports (report-facts.repository.ts); a new incident starts with none. */
type ReportFields = 'first_acknowledged_at' | 'escalated_at' | 'reopened_count';
export type NewIncident = Omit<IncidentRow, 'id' | DispatchFields | ReportFields> & Partial<Pick<IncidentRow, DispatchFields>>;

export interface ListFilter extends ListExtras {
  status?: IncidentStatus | undefined;
  priority?: Priority | undefined;
  assigneeId?: number | undefined;
  source_ref?: string | undefined;
}

type CountKey = { org_id: number; livemode: Flag; status: IncidentStatus; priority: Priority };
/** Per PostgreSQL transaction, the counts it moves, by key (`org|mode|status|priority`), written before its COMMIT. */
const pendingCounts = new WeakMap<object, Map<string, CountKey & { n: number }>>();

/**
 * Keeps `incident_counts` in step with the incidents of one (org, mode, status, priority), in the
 * caller's transaction, so a list's `total` is a sum of a few rows instead of a count of millions.
 * On PostgreSQL the moves are summed per row and written as the transaction's last statements, in
 * key order (db/transaction.ts `beforeCommit`), sent with the COMMIT in its round trip (db/pipeline.ts `withNext`):
 * every creation of an org writes the same row, whose lock is then held for the commit alone, and
 * two transactions moving two rows (a resolve and a reopen) take them in one order. A move that
 * nets to zero writes nothing.
 */
async function bump(db: Kysely<DB>, i: CountKey, delta: number) {
  const k = `${i.org_id}|${i.livemode}|${i.status}|${i.priority}`;
  let pending = pendingCounts.get(db);
  if (!pending && !onSqlite(db)) {
    const made = new Map<string, CountKey & { n: number }>();
    if (beforeCommit(db, () => writeCounts(db, made))) pendingCounts.set(db, (pending = made));
  }
  if (!pending) {
    await BUMP.execute(db, { org_id: i.org_id, livemode: i.livemode, status: i.status, priority: i.priority, n: delta });
    return;
  }
  const p = pending.get(k);
  if (p) p.n += delta;
  else pending.set(k, { org_id: i.org_id, livemode: i.livemode, status: i.status, priority: i.priority, n: delta });
}

async function writeCounts(db: Kysely<DB>, pending: Map<string, CountKey & { n: number }>): Promise<void> {
  pendingCounts.delete(db);
  const moves = [...pending.keys()].sort().map((k) => pending.get(k)!).filter((c) => c.n !== 0);
  if (moves.length === 0) return;
  // With the COMMIT, in its round trip (db/pipeline.ts): the rows' locks are held for the commit alone.
  for (const c of moves) await writeWithNext(db, BUMP.compile(db, c));
}

/** bump's upsert, compiled once (db/fixed.ts). */
const BUMP = new FixedQuery<{ org_id: number; livemode: Flag; status: IncidentStatus; priority: Priority; n: number }>((db, mark) =>
  db
    .insertInto('incident_counts')
    .values({ org_id: mark('org_id'), livemode: mark('livemode'), status: mark('status'), priority: mark('priority'), n: mark('n') })
    .onConflict((oc) => oc.columns(['org_id', 'livemode', 'status', 'priority']).doUpdateSet((eb) => ({ n: eb('incident_counts.n', '+', eb.ref('excluded.n')) }))),
);

/**
 * Moves the list cache's version of the incident's org and mode (list-cache.ts) on SQLite, where
 * the code bumps it for the writes its triggers leave out, inserts and touches (migration 0019:
 * a trigger there would cost each of them a statement journal). PostgreSQL's trigger bumps at COMMIT.
 */
async function listChanged(db: Kysely<DB>, i: { org_id: number; livemode: Flag }): Promise<void> {
  if (onSqlite(db)) await LIST_CHANGED.execute(db, { org_id: i.org_id, livemode: i.livemode });
}

const LIST_CHANGED = new FixedQuery<{ org_id: number; livemode: Flag }>((db, mark) =>
  db
    .insertInto('incident_list_versions')
    .values({ org_id: mark('org_id'), livemode: mark('livemode'), version: sql<number>`1` })
    .onConflict((oc) => oc.columns(['org_id', 'livemode']).doUpdateSet((eb) => ({ version: eb('incident_list_versions.version', '+', eb.lit(1)) }))),
);

/**
 * The row as `select *` reads it back after the insert: the values written, the new id, and the
 * defaults of the dispatch fields the insert may leave out. Built instead of asked for with
 * `returning *`, which on SQLite costs the insert about 60 us (db/fixed.ts, insertedId); a test
 * compares it with the stored row on both databases, so a column added with a default shows here.
 */
/** The row an insert wrote (its id answered, every other column as written or defaulted), counted and listed. */
async function inserted(db: Kysely<DB>, id: number, row: NewIncident): Promise<IncidentRow> {
  const incident = insertedRow(id, row);
  await bump(db, incident, 1);
  await listChanged(db, incident);
  return incident;
}

function insertedRow(id: number, row: NewIncident): IncidentRow {
  const r = Object.assign({ id }, row, DISPATCH_DEFAULTS) as IncidentRow;
  if (row.acknowledged_at !== undefined) r.acknowledged_at = row.acknowledged_at;
  if (row.acknowledged_by !== undefined) r.acknowledged_by = row.acknowledged_by;
  if (row.escalation_level !== undefined) r.escalation_level = row.escalation_level;
  if (row.escalate_at !== undefined) r.escalate_at = row.escalate_at;
  if (row.escalation_policy_id !== undefined) r.escalation_policy_id = row.escalation_policy_id;
  if (row.escalation_snapshot !== undefined) r.escalation_snapshot = row.escalation_snapshot;
  return r;
}

const DISPATCH_DEFAULTS = { acknowledged_at: null, acknowledged_by: null, escalation_level: 0, escalation_loop: 0, escalate_at: null, escalation_policy_id: null, escalation_snapshot: null, first_acknowledged_at: null, escalated_at: null, reopened_count: 0 };

/** The insert is compiled once per column list (db/fixed.ts): a creation's rows always have the same columns. */
export async function insertIncident(db: Kysely<DB>, row: NewIncident): Promise<IncidentRow> {
  const { rows } = await insertRows<{ id: number }>(db, 'incidents', [row], 'id');
  return inserted(db, rows[0]!.id, row);
}

export async function findIncident(db: Kysely<DB>, scope: Scope, id: number): Promise<IncidentRow | undefined> {
  return db.selectFrom('incidents').selectAll().where('id', '=', id).$call(scoped(scope, 'incidents')).executeTakeFirst();
}

/** The columns an incident's view reads (toIncident): what a list selects, in this order. */
export const VIEW_COLUMNS = [
  'id',
  'org_id',
  'livemode',
  'title',
  'description',
  'status',
  'priority',
  'source',
  'source_ref',
  'sla_due_at',
  'sla_warn_at',
  'customer_token',
  'lat',
  'lng',
  'location_name',
  'assignee_id',
  'created_at',
  'updated_at',
  'resolved_at',
  'acknowledged_at',
  'acknowledged_by',
  'integration_id',
  'integration_name',
  'integration_tool',
  'escalation_policy_id',
  'escalation_snapshot',
  'escalation_level',
  'escalation_loop',
  'escalate_at',
  'arrival_radius_m',
] as const;
export type IncidentViewRow = Pick<IncidentRow, (typeof VIEW_COLUMNS)[number]>;

/** A row of VIEW_COLUMNS read as an array (SQLite, ROWS_AS_ARRAYS) as the object the view reads. */
function viewRow(r: unknown[]): IncidentViewRow {
  return {
    id: r[0] as number,
    org_id: r[1] as number,
    livemode: r[2] as IncidentRow['livemode'],
    title: r[3] as string,
    description: r[4] as string | null,
    status: r[5] as IncidentStatus,
    priority: r[6] as Priority,
    source: r[7] as IncidentRow['source'],
    source_ref: r[8] as string | null,
    sla_due_at: r[9] as string,
    sla_warn_at: r[10] as string,
    customer_token: r[11] as string,
    lat: r[12] as number | null,
    lng: r[13] as number | null,
    location_name: r[14] as string | null,
    assignee_id: r[15] as number | null,
    created_at: r[16] as string,
    updated_at: r[17] as string,
    resolved_at: r[18] as string | null,
    acknowledged_at: r[19] as string | null,
    acknowledged_by: r[20] as number | null,
    integration_id: r[21] as number | null,
    integration_name: r[22] as string | null,
    integration_tool: r[23] as IncidentRow['integration_tool'],
    escalation_policy_id: r[24] as number | null,
    escalation_snapshot: r[25] as string | null,
    escalation_level: r[26] as number,
    escalation_loop: r[27] as number,
    escalate_at: r[28] as string | null,
    arrival_radius_m: r[29] as number,
  };
}

/**
 * The list's statements are compiled once per shape (db/fixed.ts `compiledOnce`, per adapter):
 * each varying value is marked by its index in the values array; the scope's mode is a constant
 * of the shape (its key holds it).
 */
const markedScope = (scope: Scope, first: number, m: Mark): Scope => ({ orgIds: scope.orgIds.map((_, i) => m(first + i)), mode: scope.mode });

/** The shape of a list, count or version statement: which filters are set, the sort, the mode, how many orgs. */
function shapeKey(kind: string, scope: Scope, f: ListFilter): string {
  return `${kind}:${scope.mode}:${scope.orgIds.length}:${f.status === undefined ? '' : 's'}${f.priority === undefined ? '' : 'p'}${f.assigneeId === undefined ? '' : 'a'}${
    f.source_ref === undefined ? '' : 'r'
  }${f.source === undefined ? '' : f.source === 'integration' ? 'i' : f.source === 'alert' ? 'f' : 'o'}${f.unassigned === true ? 'u' : ''}:${f.sort ?? 'newest'}`;
}

/** The page's statement built anew: for a text search, and the reference the compiled shapes are tested against. */
export function buildListQuery(db: Kysely<DB>, scope: Scope, f: ListFilter & { fieldAlert?: boolean }, limit: number, offset: number): CompiledQuery {
  let q = db.selectFrom('incidents').select(VIEW_COLUMNS.map((c) => `incidents.${c}` as const)).$call(scoped(scope, 'incidents'));
  if (f.status) q = q.where('status', '=', f.status);
  if (f.priority) q = q.where('priority', '=', f.priority);
  if (f.assigneeId !== undefined) q = q.where('assignee_id', '=', f.assigneeId);
  if (f.source_ref !== undefined) q = q.where('source_ref', '=', f.source_ref);
  q = whereExtras(q, f); // search, source, unassigned (list-filters.ts)
  const compiled = orderList(q, f.sort).limit(limit).offset(offset).compile();
  return CompiledQuery.raw(ROWS_AS_ARRAYS + compiled.sql, [...compiled.parameters]);
}

/**
 * The page's statement: only the columns of the view (on SQLite read as arrays, ROWS_AS_ARRAYS),
 * compiled once per shape; a text search, whose SQL depends on the text, is built each time.
 */
export function listQuery(db: Kysely<DB>, scope: Scope, f: ListFilter, limit: number, offset: number): CompiledQuery {
  if (f.search !== undefined) return buildListQuery(db, scope, f, limit, offset);
  const { status, priority, assigneeId, source_ref, source } = f;
  return compiledOnce(
    db,
    shapeKey('list', scope, f),
    (m) =>
      buildListQuery(
        db,
        markedScope(scope, 7, m),
        {
          status: status === undefined ? undefined : m(2),
          priority: priority === undefined ? undefined : m(3),
          assigneeId: assigneeId === undefined ? undefined : m(4),
          source_ref: source_ref === undefined ? undefined : m(5),
          // `integration` is a condition without a value; `alert` also excludes integrations' incidents.
          source: source === undefined || source === 'integration' ? source : m(6),
          fieldAlert: source === 'alert',
          unassigned: f.unassigned,
          sort: f.sort,
        },
        m(0),
        m(1),
      ),
    [limit, offset, status, priority, assigneeId, source_ref, source, ...scope.orgIds],
    { constants: true },
  );
}

/**
 * A page of the list. On SQLite the rows come as arrays, turned into objects here, which costs a
 * fraction of better-sqlite3 building them; PostgreSQL ignores the comment and answers objects.
 */
export async function listIncidents(db: Kysely<DB>, scope: Scope, f: ListFilter, limit: number, offset: number): Promise<IncidentViewRow[]> {
  const { rows } = await db.executeQuery<unknown>(listQuery(db, scope, f, limit, offset));
  return rows.map((r) => (Array.isArray(r) ? viewRow(r) : (r as IncidentViewRow)));
}

function buildCount(db: Kysely<DB>, scope: Scope, f: ListFilter): CompiledQuery {
  let q = db
    .selectFrom('incident_counts')
    .select(sql<number>`coalesce(sum(n), 0)`.as('n'))
    .$call(scoped(scope, 'incident_counts'));
  if (f.status) q = q.where('status', '=', f.status);
  if (f.priority) q = q.where('priority', '=', f.priority);
  return q.compile();
}

export async function countIncidents(db: Kysely<DB>, scope: Scope, f: ListFilter): Promise<number> {
  // The counters have no assignee or source_ref dimension: such lists are short, so they are counted directly.
  if (f.assigneeId !== undefined || f.source_ref !== undefined || hasExtras(f)) return countDirectly(db, scope, f);
  const { status, priority } = f;
  const query = compiledOnce(
    db,
    shapeKey('count', scope, { status, priority }),
    (m) => buildCount(db, markedScope(scope, 2, m), { status: status === undefined ? undefined : m(0), priority: priority === undefined ? undefined : m(1) }),
    [status, priority, ...scope.orgIds],
    { constants: true },
  );
  const { rows } = await db.executeQuery<{ n: number | string | bigint }>(query);
  return Number(rows[0]!.n);
}

/**
 * The list cache's version of a scope (list-cache.ts): each org's `incident_list_versions` row,
 * bumped in every transaction writing its incidents (migration 0019: triggers; on SQLite also
 * `listChanged` for inserts and touches), joined in the scope's org order (an org whose incidents
 * were never written is 0); on SQLite then `/` and the connection's data_version. Read before the
 * page's rows.
 */
export async function listVersion(db: Kysely<DB>, scope: Scope): Promise<string> {
  if (scope.orgIds.length === 0) return '';
  const sqlite = onSqlite(db);
  const query = compiledOnce(
    db,
    shapeKey('version', scope, {}),
    (m) => {
      const c = db.selectFrom('incident_list_versions').select(['org_id', 'version']).$call(scoped(markedScope(scope, 0, m), 'incident_list_versions')).compile();
      // SQLite: and the connection's data_version, which moves when another connection commits (migration 0019).
      return CompiledQuery.raw(ROWS_AS_ARRAYS + c.sql + (sqlite ? ' union all select -1, data_version from pragma_data_version' : ''), [...c.parameters]);
    },
    scope.orgIds,
    { constants: true },
  );
  const { rows } = await db.executeQuery<unknown>(query);
  const byOrg = new Map<number, string>();
  for (const r of rows) {
    const [org, version] = Array.isArray(r) ? (r as [unknown, unknown]) : [(r as { org_id: unknown }).org_id, (r as { version: unknown }).version];
    byOrg.set(Number(org), String(version));
  }
  const versions = scope.orgIds.map((id) => byOrg.get(id) ?? '0').join(',');
  return sqlite ? `${versions}/${byOrg.get(-1)}` : versions;
}

export type IncidentPatch = Partial<
  Pick<
    IncidentRow,
    'status' | 'priority' | 'description' | 'assignee_id' | 'sla_due_at' | 'sla_warn_at' | 'resolved_at' | 'updated_at' | 'acknowledged_at' | 'acknowledged_by' | 'escalation_level' | 'escalation_loop' | 'escalate_at' | 'escalation_policy_id' | 'escalation_snapshot' | 'arrival_radius_m'
  >
>;

export async function updateIncident(db: Kysely<DB>, before: IncidentRow, patch: IncidentPatch): Promise<IncidentRow> {
  const after = await db.updateTable('incidents').set(patch).where('id', '=', before.id).returningAll().executeTakeFirstOrThrow();
  if (after.status !== before.status || after.priority !== before.priority) {
    await bump(db, before, -1);
    await bump(db, after, 1);
  }
  return after;
}

export async function deleteIncident(db: Kysely<DB>, incident: IncidentRow): Promise<void> {
  await db.deleteFrom('replies').where('incident_id', '=', incident.id).execute();
  await db.deleteFrom('incidents').where('id', '=', incident.id).execute();
  await bump(db, incident, -1);
}

/** Moves `updated_at` alone (a reply, an alert repeat, an acknowledgement's timeline). */
export async function touchIncident(db: Kysely<DB>, incident: Pick<IncidentRow, 'id' | 'org_id' | 'livemode'>, nowIso: string): Promise<void> {
  // Nothing waits for its answer: on PostgreSQL it travels with the transaction's next statement (db/pipeline.ts).
  await writeWithNext(db, db.updateTable('incidents').set({ updated_at: nowIso }).where('id', '=', incident.id));
  await listChanged(db, incident);
}

/** A live incident by its status-page token (public pages show live data only). */
export async function findByToken(db: Kysely<DB>, token: string): Promise<IncidentRow | undefined> {
  return db.selectFrom('incidents').selectAll().where('customer_token', '=', token).where('livemode', '=', 1).executeTakeFirst();
}

/** A `source_ref` filter cannot use the counters: it counts the (few) incidents of that ref, by index. */
async function countDirectly(db: Kysely<DB>, scope: Scope, f: ListFilter): Promise<number> {
  let q = db.selectFrom('incidents').select((eb) => eb.fn.countAll<number>().as('n')).$call(scoped(scope, 'incidents'));
  if (f.assigneeId !== undefined) q = q.where('assignee_id', '=', f.assigneeId);
  if (f.source_ref !== undefined) q = q.where('source_ref', '=', f.source_ref);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.priority) q = q.where('priority', '=', f.priority);
  q = whereExtras(q, f);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** The predicate of the partial unique index incidents_open_source_ref_uq (migration 0020), written the same way: an insert's conflict target names it. */
const OPEN_REF = sql<SqlBool>`status in ('open', 'in_progress') and source_ref is not null`;
const OPEN = sql<SqlBool>`status in ('open', 'in_progress')`;

/**
 * The open incident of a tool's ref (every trigger, acknowledge and resolve reads it): compiled once, with and without
 * the row lock. Its equality on source_ref implies the index's `source_ref is not null` to both planners; written out
 * as well, SQLite with statistics (an ANALYZE taken before any tool's incident) searched `source_ref > NULL`, a range
 * over every incident of the org with a ref, instead of the key (dedup-plan.test.ts; docs/benchmarks.md, write-limit's notes).
 */
type RefValues = { org_id: number; livemode: Flag; source_ref: string };
const openByRef = (db: Kysely<DB>, mark: Mark) =>
  db.selectFrom('incidents').selectAll().where('org_id', '=', mark('org_id')).where('livemode', '=', mark('livemode')).where('source_ref', '=', mark('source_ref')).where(OPEN);
const OPEN_BY_REF = new FixedQuery<RefValues>(openByRef);
const OPEN_BY_REF_LOCKED = new FixedQuery<RefValues>((db, mark) => openByRef(db, mark).forUpdate());

/**
 * Inserts unless an open or in-progress incident of the same org, mode and source_ref exists (or
 * is being inserted by a concurrent transaction, which this one then waits for): undefined then.
 */
export async function insertIncidentUnlessOpen(db: Kysely<DB>, row: NewIncident): Promise<IncidentRow | undefined> {
  // Compiled once (db/fixed.ts) and answering the id only, as a creation's insert does (every tool's trigger runs it).
  const { rows } = await insertRows<{ id: number }>(db, 'incidents', [row], 'id', UNLESS_OPEN);
  return rows[0] === undefined ? undefined : inserted(db, rows[0].id, row);
}
const UNLESS_OPEN: Conflict = { name: 'unless-open', build: (q) => q.onConflict((oc) => oc.columns(['org_id', 'livemode', 'source_ref']).where(OPEN_REF).doNothing()) };

/**
 * PostgreSQL: the open or in-progress incident of the row's source_ref, locked until the transaction ends, or else the
 * row inserted, in one statement: one round trip where the look-up and the insert took two (issue #40: a new key's
 * trigger, 4 round trips, 3 with this). The insert runs only when the look-up found nothing (`where not exists`), so a
 * repeat takes no sequence value (issue #32); its `on conflict ... do nothing` still decides a race with a
 * transaction that opened the same ref meanwhile: then neither comes back (undefined), and the caller looks again.
 * Compiled once per column list (db/fixed.ts), as the insert is. SQLite runs no insert inside a WITH: it looks up,
 * then inserts (findOpenByRef, insertIncidentUnlessOpen), under its one writer's lock.
 */
export async function lockOpenOrInsert(db: Kysely<DB>, row: NewIncident): Promise<{ created: IncidentRow } | { open: IncidentRow } | undefined> {
  const values = row as unknown as Record<string, unknown>;
  const names = Object.keys(values).filter((c) => values[c] !== undefined);
  const query = compiledOnce(
    db,
    `lock-open-or-insert|${names.join(',')}`,
    (m) =>
      sql`with open as (${openByRef(db, m).forUpdate()}), ins as (insert into incidents (${sql.join(names.map((c) => sql.ref(c)))}) select ${sql.join(names.map((c) => m(c)))} where not exists (select 1 from open) on conflict (org_id, livemode, source_ref) where ${OPEN_REF} do nothing returning id) select (select id from ins) as inserted_id, open.* from (select 1) as one left join open on true`.compile(db),
    row,
  );
  const found = (await db.executeQuery<IncidentRow & { inserted_id: number | null }>(query)).rows[0]!;
  const { inserted_id: insertedId, ...open } = found;
  if (insertedId !== null) return { created: await inserted(db, insertedId, row) };
  return open.id === null ? undefined : { open };
}

/** The open or in-progress incident of a source_ref, locked on PostgreSQL until the transaction ends. */
export async function findOpenByRef(db: Kysely<DB>, lock: boolean, ref: { org_id: number; livemode: Flag; source_ref: string }): Promise<IncidentRow | undefined> {
  return (await (lock ? OPEN_BY_REF_LOCKED : OPEN_BY_REF).execute<IncidentRow>(db, ref)).rows[0];
}

/** A row by id, locked on PostgreSQL until the transaction ends (SQLite already holds its write lock). */
export async function lockIncident(db: Kysely<DB>, lock: boolean, id: number): Promise<IncidentRow | undefined> {
  const q = db.selectFrom('incidents').selectAll().where('id', '=', id);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}

/**
 * The trigger count of the next `alert_repeated` of an incident (the first trigger included): one more
 * than the latest repeat carried, read from that one event (`incident_events_incident_idx` walked
 * backwards from the incident's newest event), so a repeat costs the same after 10,000 of them as
 * after one. Counting the repeats instead read every one of them per trigger (issue 19, Events API
 * benchmark). A latest repeat without a count (not written by this code) falls back to counting.
 * The caller holds the incident's row lock (or SQLite's write lock), so no repeat lands meanwhile.
 */
export async function nextRepeatCount(db: Kysely<DB>, incidentId: number): Promise<number> {
  const latest = await db
    .selectFrom('incident_events')
    .select('data')
    .where('incident_id', '=', incidentId)
    .where('type', '=', 'alert_repeated')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!latest) return 2;
  const count = (JSON.parse(latest.data) as { count?: unknown }).count;
  if (typeof count === 'number' && Number.isSafeInteger(count) && count >= 2) return count + 1;
  return (await countRepeats(db, incidentId)) + 2;
}

/** How many repeats of its trigger an incident's timeline holds. */
async function countRepeats(db: Kysely<DB>, incidentId: number): Promise<number> {
  const row = await db
    .selectFrom('incident_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('incident_id', '=', incidentId)
    .where('type', '=', 'alert_repeated')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Sets the acknowledgement if nobody has (one conditional update: of concurrent calls exactly one
 * gets the row back) and stops the escalation clock. `userId` is null for a tool (an integration).
 */
export async function claimAcknowledgement(db: Kysely<DB>, id: number, userId: number | null, nowIso: string): Promise<IncidentRow | undefined> {
  return db
    .updateTable('incidents')
    .set({ acknowledged_at: nowIso, acknowledged_by: userId, escalate_at: null, updated_at: nowIso })
    .where('id', '=', id)
    .where('acknowledged_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

const CLOSED: IncidentStatus[] = ['resolved', 'closed'];

/** Resolved or closed incidents of the scope that ended before `before` (resolved_at, else their last change). */
export async function oldClosedIncidents(db: Kysely<DB>, scope: Scope, before: string, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('incidents')
    .select('id')
    .$call(scoped(scope, 'incidents'))
    .where('status', 'in', CLOSED)
    .where(sql<string>`coalesce(resolved_at, updated_at)`, '<', before)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Deletes one incident if it is still closed (replies and timeline go with it by cascade) and
 * keeps incident_counts in step; answers whether this call deleted it, so two sweepers never
 * count it twice.
 */
export async function deleteClosedIncident(db: Kysely<DB>, id: number): Promise<boolean> {
  const gone = await db
    .deleteFrom('incidents')
    .where('id', '=', id)
    .where('status', 'in', CLOSED)
    .returning(['org_id', 'livemode', 'status', 'priority'])
    .executeTakeFirst();
  if (!gone) return false;
  await bump(db, gone, -1);
  return true;
}
