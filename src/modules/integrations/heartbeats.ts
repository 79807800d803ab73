import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { applyChange, incidentById } from '../incidents/index.js';
import { latestEvent, logEvent } from './event-log.repository.js';
import { claimDue, claimUp, dueHeartbeats, lockHeartbeat, pingUnlessDown, postpone, swapLastCheck, updateHeartbeat, upHeartbeats, type HeartbeatRow } from './heartbeats.repository.js';
import type { IntegrationRow } from './integrations.repository.js';
import type { HeartbeatStatus } from './integrations.tables.js';
import { trigger } from './lifecycle.js';
import { coveringWindow } from './maintenance.js';

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

/** A new interval or grace counts from now for a heartbeat that is up (a down one waits for its ping). */
export async function retimeHeartbeat(ctx: AppContext, h: HeartbeatRow, intervalSeconds: number, graceSeconds: number): Promise<HeartbeatRow> {
  const now = ctx.clock.now().getTime();
  const patch = { interval_seconds: intervalSeconds, grace_seconds: graceSeconds, ...(h.status === 'up' ? { due_at: iso(new Date(now + (intervalSeconds + graceSeconds) * 1000)) } : {}) };
  return updateHeartbeat(ctx.db, h.integration_id, patch);
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
    if (await pingUnlessDown(ctx.db, integration.id, seen)) return;
  }
  await ctx.transaction(async (tx) => {
    // Down -> up once: of two pings racing, one resolves; the other is an ordinary ping. (The
    // incident id is read first: a miss writes it with `down` in one transaction.)
    const was = await lockHeartbeat(tx.db, integration.id, lockRows(ctx));
    if (!was || was.status !== 'down' || !(await claimUp(tx.db, integration.id, seen))) {
      if (was) await updateHeartbeat(tx.db, integration.id, seen);
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
  const last = await swapLastCheck(ctx.db, LAST_CHECK, iso(now));
  const gap = last === undefined ? Infinity : now.getTime() - last;
  if (restart || gap > MIN_INTERVAL_SECONDS * 1000) await freshIntervals(ctx, now, restart ? 0 : gap);

  let opened = 0;
  for (const { heartbeat, integration } of await dueHeartbeats(ctx.db, iso(now), 500)) {
    if (await miss(ctx, integration, heartbeat, now)) opened += 1;
  }
  return opened;
}

/** Every heartbeat that is up and whose interval is shorter than `gap` (all of them for 0) counts from now. */
async function freshIntervals(ctx: AppContext, now: Date, gap: number): Promise<void> {
  for (const h of await upHeartbeats(ctx.db)) {
    if (gap !== 0 && h.interval_seconds * 1000 >= gap) continue;
    const fresh = iso(new Date(now.getTime() + spanMs(h)));
    if (h.due_at !== null && h.due_at >= fresh) continue;
    await postpone(ctx.db, h.integration_id, fresh);
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
    if (window) {
      if (!(await claimDue(tx.db, h, { due_at: iso(new Date(now.getTime() + spanMs(h))) }))) return false;
      const reason = `missed during maintenance window ${window.id}`;
      const latest = await latestEvent(tx.db, integration.id);
      if (latest?.outcome !== 'suppressed' || latest.reason !== reason) await logEvent(tx.db, integration, { source: 'heartbeat', outcome: 'suppressed', reason }, now);
      return false;
    }
    if (!(await claimDue(tx.db, h, { status: 'down', down_at: iso(now) }))) return false;
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
    await updateHeartbeat(tx.db, h.integration_id, { incident_id: placed.incident.id });
    const reason = `no ping since ${since}`;
    await logEvent(tx.db, integration, { source: 'heartbeat', outcome: placed.created ? 'opened' : 'repeated', incident_id: placed.incident.id, reason }, now);
    return placed.created;
  });
}
