import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { applyChange, incidentById } from '../incidents/index.js';
import { logEvent } from './event-log.repository.js';
import { findIntegrationById, type IntegrationRow } from './integrations.repository.js';
import type { HeartbeatStatus, IntegrationHeartbeatsTable } from './integrations.tables.js';
import { trigger } from './lifecycle.js';
import { coveringWindow } from './maintenance.js';

export type HeartbeatRow = IntegrationHeartbeatsTable;

/** How often the checker runs (the job scheduler, one instance per tick): well under the shortest interval. */
export const HEARTBEAT_TICK_MS = 5_000;
export const MIN_INTERVAL_SECONDS = 30;
export const MAX_INTERVAL_SECONDS = 86_400;
/** The checker's last run (clock time), shared by every instance through the database. */
const LAST_CHECK = 'heartbeats:last_check';
/** Contexts (instances) whose checker has run: the first run of each gives every heartbeat a fresh interval. */
const started = new WeakSet<AppContext>();

export const refOf = (integrationId: number) => `heartbeat:${integrationId}`;
const spanMs = (h: Pick<HeartbeatRow, 'interval_seconds' | 'grace_seconds'>) => (h.interval_seconds + h.grace_seconds) * 1000;
const lockRows = (ctx: AppContext) => ctx.database.dialect === 'postgres';

export type HeartbeatState = HeartbeatStatus | 'late';

/** `late`: up, past its interval but within its grace. */
export function stateOf(h: HeartbeatRow, now: Date): HeartbeatState {
  if (h.status !== 'up' || h.due_at === null) return h.status;
  return now.getTime() > Date.parse(h.due_at) - h.grace_seconds * 1000 ? 'late' : 'up';
}

export async function insertHeartbeat(db: Kysely<DB>, integrationId: number, intervalSeconds: number, graceSeconds: number): Promise<HeartbeatRow> {
  return db
    .insertInto('integration_heartbeats')
    .values({ integration_id: integrationId, interval_seconds: intervalSeconds, grace_seconds: graceSeconds, status: 'new', last_ping_at: null, due_at: null, incident_id: null, down_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findHeartbeat(db: Kysely<DB>, integrationId: number): Promise<HeartbeatRow | undefined> {
  return db.selectFrom('integration_heartbeats').selectAll().where('integration_id', '=', integrationId).executeTakeFirst();
}

export async function heartbeatsOf(db: Kysely<DB>, integrationIds: number[]): Promise<Map<number, HeartbeatRow>> {
  if (integrationIds.length === 0) return new Map();
  const rows = await db.selectFrom('integration_heartbeats').selectAll().where('integration_id', 'in', integrationIds).execute();
  return new Map(rows.map((r) => [r.integration_id, r]));
}

/** A new interval or grace counts from now for a heartbeat that is up (a down one waits for its ping). */
export async function retimeHeartbeat(ctx: AppContext, h: HeartbeatRow, intervalSeconds: number, graceSeconds: number): Promise<HeartbeatRow> {
  const now = ctx.clock.now().getTime();
  const patch = { interval_seconds: intervalSeconds, grace_seconds: graceSeconds, ...(h.status === 'up' ? { due_at: iso(new Date(now + (intervalSeconds + graceSeconds) * 1000)) } : {}) };
  return ctx.db.updateTable('integration_heartbeats').set(patch).where('integration_id', '=', h.integration_id).returningAll().executeTakeFirstOrThrow();
}

/**
 * A ping: one update of the heartbeat's row (hot path: no transaction, no log entry). A heartbeat
 * that is down comes up in one transaction with the resolve of the incident its miss opened (on
 * its timeline) and an entry in the event log.
 */
export async function ping(ctx: AppContext, integration: IntegrationRow, h: HeartbeatRow): Promise<void> {
  const now = ctx.clock.now();
  const seen = { status: 'up' as const, last_ping_at: iso(now), due_at: iso(new Date(now.getTime() + spanMs(h))) };
  if (h.status !== 'down') {
    const r = await ctx.db.updateTable('integration_heartbeats').set(seen).where('integration_id', '=', integration.id).where('status', '!=', 'down').executeTakeFirst();
    if (Number(r.numUpdatedRows) === 1) return;
  }
  await ctx.transaction(async (tx) => {
    // Down -> up once: of two pings racing, one resolves; the other is an ordinary ping. (The
    // incident id is read first: a miss writes it with `down` in one transaction.)
    const read = tx.db.selectFrom('integration_heartbeats').select(['status', 'incident_id']).where('integration_id', '=', integration.id);
    const was = await (lockRows(ctx) ? read.forUpdate() : read).executeTakeFirst();
    const up = was?.status === 'down' ? await tx.db.updateTable('integration_heartbeats').set({ ...seen, incident_id: null, down_at: null }).where('integration_id', '=', integration.id).where('status', '=', 'down').executeTakeFirst() : undefined;
    if (!was || Number(up?.numUpdatedRows ?? 0) !== 1) {
      await tx.db.updateTable('integration_heartbeats').set(seen).where('integration_id', '=', integration.id).execute();
      return;
    }
    const resolved = was.incident_id === null ? undefined : await resolveMiss(ctx, tx, was.incident_id);
    await logEvent(
      tx.db,
      integration,
      { source: 'heartbeat', outcome: resolved ? 'resolved' : 'ignored', incident_id: was.incident_id, reason: resolved ? 'ping after a miss' : 'ping after a miss; its incident was already closed' },
      now,
    );
  });
}

async function resolveMiss(ctx: AppContext, tx: Tx, incidentId: number) {
  const incident = await incidentById(tx.db, incidentId, lockRows(ctx));
  if (!incident || incident.status === 'resolved' || incident.status === 'closed') return undefined;
  return applyChange(ctx, tx, incident, { status: 'resolved' }, null);
}

async function lastCheck(db: Kysely<DB>, now: Date): Promise<number | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', LAST_CHECK).executeTakeFirst();
  await db
    .insertInto('settings')
    .values({ key: LAST_CHECK, value: iso(now) })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: iso(now) }))
    .execute();
  return row ? Date.parse(row.value) : undefined;
}

/**
 * The heartbeat checker (a job, one instance per tick): heartbeats past their due time (a ping at
 * the due time itself is on time) go down,
 * each opening one incident through its integration's escalation policy. Before it looks:
 * - the first run of an instance (a restart) gives every heartbeat that is up a fresh interval
 *   from now: pings sent while the service was away were lost, not missed;
 * - so does a gap since the last run (of any instance, kept in the database) longer than a
 *   heartbeat's interval: a pause of the service, or of its checker.
 * Answers how many incidents it opened.
 */
export async function checkHeartbeats(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  const restart = !started.has(ctx);
  started.add(ctx);
  const last = await lastCheck(ctx.db, now);
  const gap = last === undefined ? Infinity : now.getTime() - last;
  if (restart || gap > MIN_INTERVAL_SECONDS * 1000) await freshIntervals(ctx, now, restart ? 0 : gap);

  const due = await ctx.db
    .selectFrom('integration_heartbeats as h')
    .innerJoin('integrations as i', 'i.id', 'h.integration_id')
    .selectAll('h')
    .where('h.status', '=', 'up')
    .where('h.due_at', '<', iso(now))
    .where('i.revoked_at', 'is', null)
    .orderBy('h.due_at')
    .limit(500)
    .execute();
  let opened = 0;
  for (const h of due) {
    const integration = await findIntegrationById(ctx.db, h.integration_id);
    if (integration && (await miss(ctx, integration, h, now))) opened += 1;
  }
  return opened;
}

/** Every heartbeat that is up and whose interval is shorter than `gap` (all of them for 0) counts from now. */
async function freshIntervals(ctx: AppContext, now: Date, gap: number): Promise<void> {
  const ups = await ctx.db.selectFrom('integration_heartbeats').select(['integration_id', 'interval_seconds', 'grace_seconds', 'due_at']).where('status', '=', 'up').execute();
  for (const h of ups) {
    if (gap !== 0 && h.interval_seconds * 1000 >= gap) continue;
    const fresh = iso(new Date(now.getTime() + spanMs(h)));
    if (h.due_at !== null && h.due_at >= fresh) continue;
    // Never moves one back, and loses to a ping that came meanwhile (a later due time).
    await ctx.db.updateTable('integration_heartbeats').set({ due_at: fresh }).where('integration_id', '=', h.integration_id).where('status', '=', 'up').where('due_at', '<', fresh).execute();
  }
}

/**
 * One miss, claimed by a conditional update (still up, with the due time read) in the transaction
 * that opens its incident: across instances and concurrent checkers, one incident per miss, and a
 * ping that came meanwhile (a new due time) wins. Inside a maintenance window covering the
 * integration, nothing opens: the heartbeat gets a fresh interval and the log says `suppressed`
 * (once per window).
 */
async function miss(ctx: AppContext, integration: IntegrationRow, h: HeartbeatRow, now: Date): Promise<boolean> {
  const window = await coveringWindow(ctx.db, integration, now);
  return ctx.transaction(async (tx) => {
    const claim = (set: Partial<HeartbeatRow>) =>
      tx.db.updateTable('integration_heartbeats').set(set).where('integration_id', '=', h.integration_id).where('status', '=', 'up').where('due_at', '=', h.due_at).executeTakeFirst();
    if (window) {
      const claimed = await claim({ due_at: iso(new Date(now.getTime() + spanMs(h))) });
      if (Number(claimed.numUpdatedRows) !== 1) return false;
      const reason = `missed during maintenance window ${window.id}`;
      const latest = await tx.db.selectFrom('integration_events').select(['outcome', 'reason']).where('integration_id', '=', integration.id).orderBy('id', 'desc').limit(1).executeTakeFirst();
      if (latest?.outcome !== 'suppressed' || latest.reason !== reason) await logEvent(tx.db, integration, { source: 'heartbeat', outcome: 'suppressed', reason }, now);
      return false;
    }
    const claimed = await claim({ status: 'down', down_at: iso(now) });
    if (Number(claimed.numUpdatedRows) !== 1) return false;
    const since = h.last_ping_at ?? h.due_at;
    const placed = await trigger(
      ctx,
      integration,
      {
        ref: refOf(integration.id),
        title: `Heartbeat missed: ${integration.name}`,
        description: `No ping since ${since} (interval ${h.interval_seconds} s, grace ${h.grace_seconds} s). The next ping resolves this incident.`,
        priority: 'urgent',
        source: 'alert',
        tool: 'heartbeat',
        data: { last_ping_at: h.last_ping_at, due_at: h.due_at },
      },
      tx,
    );
    await tx.db.updateTable('integration_heartbeats').set({ incident_id: placed.incident.id }).where('integration_id', '=', h.integration_id).execute();
    const reason = `no ping since ${since}`;
    await logEvent(tx.db, integration, { source: 'heartbeat', outcome: placed.created ? 'opened' : 'repeated', incident_id: placed.incident.id, reason }, now);
    return placed.created;
  });
}
