import { deleteMemberlessOrgs } from '../modules/privacy/index.js';
import { sweepRetention } from '../modules/retention/index.js';
import { BACKUP_TICK_MS, scheduledBackup } from '../ops/scheduled-backup.js';
import { metricsOf } from '../modules/metrics/index.js';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import type { DB } from '../db/schema.js';
import { iso } from '../lib/clock.js';
import { sweepSilentBeacons } from '../modules/signals/index.js';
import { sweepEscalations } from './escalation-sweeper.js';
import { sweepSla } from './sla-sweeper.js';
import { syncDueCalendars } from '../modules/calendars/index.js';
import { sendHandoffNotices, syncShiftCalendars } from '../modules/oncall/index.js';
import { runPaging } from '../modules/paging/index.js';
import { sendShiftStarts } from '../modules/subscriptions/index.js';
import { checkHeartbeats, HEARTBEAT_TICK_MS } from '../modules/integrations/index.js';

export interface Job {
  name: string;
  intervalMs: number;
  run(ctx: AppContext): Promise<unknown>;
}

/** A tick may be claimed this long after the last one: timers on several instances drift a little. */
export const TICK_SLACK = 0.9;

/**
 * Claims the current tick of a job for this instance, once across every instance on the same
 * database: one conditional update of the job's row in `settings` (its last run), which only one
 * of any number of concurrent claimers can win, and only once `intervalMs * TICK_SLACK` has passed
 * since the last claimed run. Works on both engines and needs no Redis, so sweeps keep running,
 * once per tick, while Redis is away. Wall-clock time, like the timers that call it.
 */
export async function claimTick(db: Kysely<DB>, name: string, intervalMs: number, nowMs = Date.now()): Promise<boolean> {
  const key = `job:${name}:last_run`;
  await db
    .insertInto('settings')
    .values({ key, value: iso(new Date(0)) })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const claimed = await db
    .updateTable('settings')
    .set({ value: iso(new Date(nowMs)) })
    .where('key', '=', key)
    .where('value', '<=', iso(new Date(nowMs - intervalMs * TICK_SLACK)))
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

/**
 * Where the scheduler's time comes from: real timers in production; tests pass a ticker they
 * advance by hand, so what they check never depends on how loaded the machine is. `every` calls
 * `fire` each `ms` and answers the function that stops it; `fire` answers the tick's work, which
 * a manual ticker may await (real timers ignore it).
 */
export interface Ticker {
  now(): number;
  every(ms: number, fire: () => Promise<unknown> | undefined): () => void;
}

export const realTicker: Ticker = {
  now: () => Date.now(),
  every(ms, fire) {
    const timer = setInterval(() => void fire(), ms);
    return () => clearInterval(timer);
  },
};

/**
 * Runs each job on its interval, never two runs of one job at once, and with several instances
 * on one database once per tick across all of them (`claimTick`); a failing run is logged and
 * the next one tries again. Returns the function that stops them (and waits for running ones).
 */
export function startJobs(ctx: AppContext, jobs: Job[] = defaultJobs(ctx), ticker: Ticker = realTicker): () => Promise<void> {
  const running = new Map<string, Promise<unknown>>();
  const stops = jobs.map((job) =>
    ticker.every(job.intervalMs, () => {
      if (running.has(job.name)) return undefined;
      const run = claimTick(ctx.db, job.name, job.intervalMs, ticker.now())
        .then(async (mine) => {
          if (!mine) return;
          await job.run(ctx);
          metricsOf(ctx).jobRuns.inc({ job: job.name, outcome: 'ok' });
        })
        .catch((err: unknown) => {
          metricsOf(ctx).jobRuns.inc({ job: job.name, outcome: 'failed' });
          ctx.log.error({ err, job: job.name }, 'job failed');
        })
        .finally(() => running.delete(job.name));
      running.set(job.name, run);
      return run;
    }),
  );
  return async () => {
    stops.forEach((stop) => stop());
    await Promise.all(running.values());
  };
}

export const defaultJobs = (ctx: AppContext): Job[] => [
  { name: 'sla-sweeper', intervalMs: ctx.config.slaSweepIntervalMs, run: sweepSla },
  // Paging: the walks' due levels, then the notifications due, each claimed with a conditional update, so once across instances.
  { name: 'paging-notifications', intervalMs: ctx.config.pagingSweepIntervalMs, run: runPaging },
  // Heartbeats (issue #37): misses open incidents, each claimed with a conditional update; the first
  // run of an instance, or one after a gap, gives every heartbeat a fresh interval.
  { name: 'heartbeats', intervalMs: HEARTBEAT_TICK_MS, run: checkHeartbeats },
  { name: 'beacon-silence', intervalMs: ctx.config.beaconSweepIntervalMs, run: sweepSilentBeacons },
  // Hosts' external calendars; each connection is also leased, so a manual sync never runs twice with it.
  { name: 'calendar-sync', intervalMs: Math.min(ctx.config.calendarSyncIntervalMs, 60_000), run: syncDueCalendars },
  { name: 'escalation', intervalMs: ctx.config.slaSweepIntervalMs, run: sweepEscalations },
  // On-call (issue #35): handoff notices (each shift's notice claimed once across instances), and
  // shifts written into the CalDAV calendars their people chose for write-back.
  { name: 'handoff-notices', intervalMs: 60_000, run: sendHandoffNotices },
  { name: 'oncall-calendars', intervalMs: ctx.config.calendarSyncIntervalMs, run: syncShiftCalendars },
  // Incident subscriptions (issue #37): `oncall.shift_started`, each shift claimed once across instances.
  { name: 'subscription-shifts', intervalMs: 60_000, run: sendShiftStarts },
  // Issue #22: retention (every org, in batches) and, with BACKUP_DIR, the scheduled SQLite backup.
  { name: 'retention', intervalMs: ctx.config.ops.retentionSweepIntervalMs, run: sweepRetention },
  // Orgs of a deleted account whose deletion crashed between its two transactions (privacy.service.ts).
  { name: 'memberless-orgs', intervalMs: ctx.config.ops.retentionSweepIntervalMs, run: (c) => deleteMemberlessOrgs(c) },
  ...(ctx.config.ops.backupDir ? [{ name: 'backup', intervalMs: BACKUP_TICK_MS, run: scheduledBackup }] : []),
];
