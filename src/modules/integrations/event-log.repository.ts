import { sql, type Kysely } from 'kysely';
import { FixedQuery, insertRows } from '../../db/fixed.js';
import { writeWithNext } from '../../db/pipeline.js';
import type { DB } from '../../db/schema.js';
import { iso } from '../../lib/clock.js';
import type { IntegrationRow } from './integrations.repository.js';
import type { IntegrationEventOutcome, IntegrationEventSource } from './integrations.tables.js';

/** What the log keeps of one body, and how many entries of one integration it answers. */
export const EVENT_BODY_MAX_BYTES = 64 * 1024;
export const EVENT_LOG_SIZE = 100;
// Entries older than 7 days go in the retention sweep (modules/retention).

export interface AlertResult {
  ref: string;
  outcome: IntegrationEventOutcome;
  incident_id: number | null;
}

export interface LoggedEvent {
  source: IntegrationEventSource;
  outcome: IntegrationEventOutcome;
  reason?: string | null;
  incident_id?: number | null;
  /** Per alert, for a notification of several. */
  results?: AlertResult[];
  /** The parsed body as received; stored without the key (`routing_key`, or the key anywhere in it). */
  body?: unknown;
}

/** The body as the log keeps it: JSON text, never the integration key, at most 64 KB. */
export function storedBody(body: unknown, key: string | undefined): { body: string | null; body_truncated: 0 | 1 } {
  if (body === undefined || body === null || body === '') return { body: null, body_truncated: 0 };
  let value = body;
  if (typeof value === 'object' && !Array.isArray(value) && 'routing_key' in value) {
    const { routing_key: _key, ...rest } = value as Record<string, unknown>;
    value = { ...rest, routing_key: '[key]' };
  }
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  // The key may also sit in the body (a URL of the integration echoed back): never stored.
  if (key) text = text.split(key).join('[key]');
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= EVENT_BODY_MAX_BYTES) return { body: text, body_truncated: 0 };
  return { body: bytes.subarray(0, EVENT_BODY_MAX_BYTES).toString('utf8').replace(/\uFFFD$/, ''), body_truncated: 1 };
}

/** An integration's log is trimmed to its last EVENT_LOG_SIZE entries every TRIM_EVERY entries an instance logs for it. */
const TRIM_EVERY = 10;
/** Per integration, the entries this instance logged since it last trimmed it (dropped whole past MAX_TRACKED: a trim comes later, never lost for good). */
const sinceTrim = new Map<number, number>();
const MAX_TRACKED = 10_000;

/**
 * Appends an entry to the integration's event log (in the caller's transaction when given its db).
 * Every tenth entry an instance logs for an integration trims that integration's log to its last
 * 100, so a flood between two retention sweeps cannot grow it without bound (by at most ten entries
 * per instance); the list answers the last 100 in any case. Neither answers anything the caller
 * needs: both travel with the transaction's next statement on PostgreSQL (db/pipeline.ts).
 */
export async function logEvent(db: Kysely<DB>, integration: Pick<IntegrationRow, 'id' | 'org_id' | 'livemode'>, e: LoggedEvent, now: Date, key?: string): Promise<void> {
  const stored = storedBody(e.body, key);
  await insertRows(
    db,
    'integration_events',
    [
      {
        integration_id: integration.id,
        org_id: integration.org_id,
        livemode: integration.livemode,
        source: e.source,
        outcome: e.outcome,
        reason: e.reason ? e.reason.slice(0, 1000) : null,
        incident_id: e.incident_id ?? null,
        results: e.results && e.results.length > 1 ? JSON.stringify(e.results) : null,
        ...stored,
        created_at: iso(now),
      },
    ],
    'later',
  );
  const n = (sinceTrim.get(integration.id) ?? 0) + 1;
  if (n < TRIM_EVERY) {
    if (sinceTrim.size >= MAX_TRACKED && !sinceTrim.has(integration.id)) sinceTrim.clear();
    sinceTrim.set(integration.id, n);
    return;
  }
  sinceTrim.delete(integration.id);
  await writeWithNext(db, TRIM.compile(db, { integration_id: integration.id }));
}

/** Deletes the integration's entries older than its last EVENT_LOG_SIZE (none while it has fewer: the bound is null), in one statement. */
const TRIM = new FixedQuery<{ integration_id: number }>((db, mark) =>
  db
    .deleteFrom('integration_events')
    .where('integration_id', '=', mark('integration_id'))
    .where('id', '<', (eb) =>
      eb
        .selectFrom('integration_events')
        .select('id')
        .where('integration_id', '=', mark('integration_id'))
        .orderBy('id', 'desc')
        .limit(sql.lit(1))
        .offset(sql.lit(EVENT_LOG_SIZE - 1)),
    ),
);

/** The newest entry's outcome and reason (undefined: none yet). */
export async function latestEvent(db: Kysely<DB>, integrationId: number): Promise<{ outcome: IntegrationEventOutcome; reason: string | null } | undefined> {
  return db.selectFrom('integration_events').select(['outcome', 'reason']).where('integration_id', '=', integrationId).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/** The last 100 entries, newest first, each alert's results as a value (stored as JSON text). */
export async function listEvents(db: Kysely<DB>, integrationId: number) {
  const rows = await db.selectFrom('integration_events').selectAll().where('integration_id', '=', integrationId).orderBy('id', 'desc').limit(EVENT_LOG_SIZE).execute();
  return rows.map((r) => ({ ...r, results: r.results === null ? null : (JSON.parse(r.results) as AlertResult[]) }));
}

/**
 * The outcome a payload of several alerts is listed under: the one that did the most (an open
 * over a repeat over a resolve...), with its incident.
 */
const WEIGHT: IntegrationEventOutcome[] = ['opened', 'repeated', 'resolved', 'acknowledged', 'suppressed', 'ignored', 'rejected'];
export function headline(results: AlertResult[]): { outcome: IntegrationEventOutcome; incident_id: number | null } {
  const first = [...results].sort((a, b) => WEIGHT.indexOf(a.outcome) - WEIGHT.indexOf(b.outcome))[0];
  return first ? { outcome: first.outcome, incident_id: first.incident_id } : { outcome: 'ignored', incident_id: null };
}
