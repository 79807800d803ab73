// Stored report answers (issue #39). A report over a year of a million incidents reads and sorts
// the year: seconds of the database's time, whatever the index. Asked again, the same question is
// answered from its stored answer while that still holds; every answer says the instant its figures
// are of (`as_of`). As analytics products do (PagerDuty's are hours behind), the figures may trail
// the data, here by little, and only for questions that take long (docs/reports.md, "Stored answers"):
//
// - An answer that took REPORT_STORE_AFTER_MS or longer to compute is stored (report_results, one
//   row per org, mode, report and question); quicker ones are computed on every request, as before.
// - A stored answer holds while the data it was computed from has not changed (`dataVersion`: the
//   org's incident version, moved by a trigger on every change of its incidents, and for the on-call
//   report the org's schedules' versions and its latest page) and it is younger than
//   REPORT_MAX_AGE_SECONDS (what moves with time alone: SLA deadlines coming due, hours served up to
//   now; and what no version follows: names, people's zones).
// - One that no longer holds is recomputed by one instance (a lease on its row, taken by a
//   conditional write: every other instance sees it and does not compute), while every request
//   meanwhile gets the last stored answer with its `as_of`; a request that came within
//   REPORT_FRESH_WAIT_MS of the recomputation's start waits for it up to then. An answer older than
//   REPORT_MAX_STALE_SECONDS (a question nobody asked for a while) is never served: the request waits
//   for the new one. `Cache-Control: no-cache` computes the answer for that request, and waits.
// - The data version is read before computing: a change that commits during the computation leaves
//   the answer older than its version, so it is recomputed at the next request, never served as new.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { AppContext } from '../../context.js';
import { DAY } from '../../lib/clock.js';
import { listVersion } from '../incidents/index.js';

/** What identifies a stored answer. */
export interface ResultKey {
  orgId: number;
  livemode: 0 | 1;
  kind: 'incidents' | 'oncall';
  /** The question (range, zone, grouping) as canonical JSON. */
  question: string;
}

export interface Answer<T> {
  report: T;
  /** The instant the figures are of (ISO). */
  asOf: string;
}

export interface ReportStoreConfig {
  /** Answers that took this long or longer are stored. */
  storeAfterMs: number;
  /** A stored answer older than this is recomputed, whatever changed. */
  maxAgeMs: number;
  /** A stored answer older than this is never served: the request waits for the new one. */
  maxStaleMs: number;
  /** How long after a recomputation's start a request waits for it before taking the stored answer. */
  freshWaitMs: number;
}

/** A stored answer not asked for this long is deleted (when a new question is stored). */
const KEEP_UNASKED_MS = DAY;

interface Flight {
  startedAt: number;
  done: Promise<Answer<unknown> | undefined>;
}

/** Per instance (ctx.reportStore, built by src/context.ts): the computations it is running. */
export class ReportStore {
  private readonly flights = new Map<string, Flight>();
  /** Reports this instance computed (tests of the stored path count them). */
  computed = 0;

  constructor(readonly config: ReportStoreConfig) {}

  /** The computation of `id` running here, or a new one. */
  join(id: string, run: () => Promise<Answer<unknown> | undefined>): Flight {
    const running = this.flights.get(id);
    if (running) return running;
    const flight: Flight = { startedAt: performance.now(), done: run() };
    this.flights.set(id, flight);
    const forget = () => {
      if (this.flights.get(id) === flight) this.flights.delete(id);
    };
    flight.done.then(forget, forget);
    return flight;
  }

  /** Settles when no computation runs here (tests; a stopping server need not wait). */
  async idle(): Promise<void> {
    while (this.flights.size > 0) await Promise.allSettled([...this.flights.values()].map((f) => f.done));
  }
}

const idOf = (k: ResultKey) => `${k.orgId}/${k.livemode}/${k.kind}/${k.question}`;
/** The row of `k`, as columns (a where filter, an insert's values). */
const rowKey = (k: ResultKey) => ({ org_id: k.orgId, livemode: k.livemode, kind: k.kind, question: k.question });

/** The version of what a report reads, as text: equal versions, equal data (but for time passing). */
async function dataVersion(ctx: AppContext, k: ResultKey): Promise<string> {
  // The incident list's own version of the org and mode (modules/incidents): moved in every transaction writing its incidents.
  const v = `i${await listVersion(ctx.db, { orgIds: [k.orgId], mode: k.livemode === 1 ? 'live' : 'test' })}`;
  if (k.kind !== 'oncall') return v;
  // Every write that changes who is on call moves its schedule's version (migration 0051); a deleted
  // schedule lowers the count. A page is a new row of paging_pages, the latest by its index by org and
  // time (one made with no change of its incident's row: a later level of a walk).
  const [s, p] = await Promise.all([
    ctx.db
      .selectFrom('oncall_schedules')
      .select([sql<number>`count(*)`.as('n'), sql<number>`coalesce(sum(version), 0)`.as('sum')])
      .where('org_id', '=', k.orgId)
      .executeTakeFirstOrThrow(),
    ctx.db
      .selectFrom('paging_pages')
      .select(sql<string | null>`max(created_at)`.as('last'))
      .where('org_id', '=', k.orgId)
      .where('livemode', '=', k.livemode)
      .executeTakeFirstOrThrow(),
  ]);
  return `${v}:s${Number(s.n)}.${Number(s.sum)}:p${p.last ?? ''}`;
}

function readRow(ctx: AppContext, k: ResultKey) {
  return ctx.db
    .selectFrom('report_results')
    .select(['data_version', 'as_of', 'body', 'compute_ms', 'lease_until'])
    .where((eb) => eb.and(rowKey(k)))
    .executeTakeFirst();
}
type Row = NonNullable<Awaited<ReturnType<typeof readRow>>>;

/**
 * The answer to a report question: the stored one while it holds, else computed by `compute` with
 * the instant its figures are of (see the top of this file). `fresh`: computed for this request.
 */
export async function storedAnswer<T>(ctx: AppContext, k: ResultKey, fresh: boolean, compute: (now: Date) => Promise<T>): Promise<Answer<T>> {
  const store = ctx.reportStore;
  const id = idOf(k);
  if (fresh) return computeAndSave(ctx, k, compute, {});
  const [row, version] = await Promise.all([readRow(ctx, k), dataVersion(ctx, k)]);
  const body = row?.body;
  if (!row || body === null || body === undefined) {
    // Nothing stored: computed here, once however many requests ask it of this instance meanwhile.
    return (await store.join(id, () => computeAndSave(ctx, k, compute, { version, stored: false })).done) as Answer<T>;
  }
  const stored = (): Answer<T> => ({ report: JSON.parse(body) as T, asOf: row.as_of });
  const now = ctx.clock.nowMs();
  const age = now - Date.parse(row.as_of);
  if (row.data_version === version && age < store.config.maxAgeMs) return stored();
  if (age >= store.config.maxStaleMs) {
    // Too old to be served (nobody asked for a while): this request waits for the new answer, as for a first one.
    const known = { version, stored: true };
    const done = (await store.join(id, () => computeAndSave(ctx, k, compute, known)).done) as Answer<T> | undefined;
    return done ?? computeAndSave(ctx, k, compute, known);
  }
  // Another instance holds the lease: it is recomputing.
  if (row.lease_until !== null && Date.parse(row.lease_until) > now) return stored();
  const flight = store.join(id, () => refresh(ctx, k, compute, row, version));
  const wait = flight.startedAt + store.config.freshWaitMs - performance.now();
  const done = wait > 0 ? await Promise.race([flight.done.catch(() => undefined), new Promise<undefined>((r) => setTimeout(r, wait))]) : undefined;
  return (done as Answer<T> | undefined) ?? stored();
}

/** A stored answer recomputed under a lease; undefined when another instance took it, or stored a new one, first. Errors are logged. */
async function refresh<T>(ctx: AppContext, k: ResultKey, compute: (now: Date) => Promise<T>, row: Row, version: string): Promise<Answer<T> | undefined> {
  const token = randomBytes(12).toString('base64url');
  const now = ctx.clock.nowMs();
  // The lease outlasts the computation: three times the last one's time, at least 30 s.
  const leaseUntil = new Date(now + Math.max(30_000, 3 * Number(row.compute_ms))).toISOString();
  const claimed = await ctx.db
    .updateTable('report_results')
    .set({ lease_until: leaseUntil, lease_token: token })
    .where((eb) => eb.and(rowKey(k)))
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', new Date(now).toISOString())]))
    // Still the answer this request found old: another instance may have stored a new one since.
    .where('as_of', '=', row.as_of)
    .where('data_version', '=', row.data_version)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) return undefined;
  try {
    return await computeAndSave(ctx, k, compute, { version, stored: true, token });
  } catch (err) {
    ctx.log.error({ err, report: k.kind, org_id: k.orgId }, 'report recomputation failed');
    await ctx.db
      .updateTable('report_results')
      .set({ lease_until: null, lease_token: null })
      .where((eb) => eb.and(rowKey(k)))
      .where('lease_token', '=', token)
      .execute();
    return undefined;
  }
}

/** What the caller read before computing: the data version, whether an answer is stored, the lease it holds. */
interface Known {
  version?: string;
  stored?: boolean;
  token?: string;
}

/**
 * Computes the answer and stores it: under the lease `token` into the leased row; without one, where
 * it took REPORT_STORE_AFTER_MS or more (or a stored answer exists), unless the row is leased or
 * holds an answer of a later instant. What the caller read (`known`) is not read again.
 */
async function computeAndSave<T>(ctx: AppContext, k: ResultKey, compute: (now: Date) => Promise<T>, known: Known): Promise<Answer<T>> {
  const { token } = known;
  const version = known.version ?? (await dataVersion(ctx, k));
  const now = ctx.clock.now();
  const started = performance.now();
  ctx.reportStore.computed++;
  const report = await compute(now);
  const computeMs = performance.now() - started;
  const asOf = now.toISOString();
  const values = { data_version: version, as_of: asOf, body: JSON.stringify(report), compute_ms: computeMs, lease_until: null, lease_token: null };
  if (token !== undefined) {
    await ctx.db
      .updateTable('report_results')
      .set(values)
      .where((eb) => eb.and(rowKey(k)))
      .where('lease_token', '=', token)
      .execute();
    return { report, asOf };
  }
  if (computeMs >= ctx.reportStore.config.storeAfterMs || (known.stored ?? (await readRow(ctx, k)) !== undefined)) {
    const inserted = await ctx.db
      .insertInto('report_results')
      .values({ ...rowKey(k), ...values })
      .onConflict((oc) =>
        oc
          .columns(['org_id', 'livemode', 'kind', 'question'])
          .doUpdateSet(values)
          .where((eb) => eb.and([eb('report_results.lease_token', 'is', null), eb('report_results.as_of', '<=', asOf)])),
      )
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) {
      // Answers nobody asked for a day go (a question asked is recomputed, and so kept, within REPORT_MAX_AGE_SECONDS).
      await ctx.db
        .deleteFrom('report_results')
        .where('org_id', '=', k.orgId)
        .where('as_of', '<', new Date(now.getTime() - KEEP_UNASKED_MS).toISOString())
        .where('lease_token', 'is', null)
        .execute();
    }
  }
  return { report, asOf };
}
