import { metricsOf } from '../metrics/index.js';
import type { AppContext } from '../../context.js';
import type { OutboxKind } from '../../db/schema.js';
import { HOUR, MINUTE, iso } from '../../lib/clock.js';
import { claimDue, recordAttempt, settle, type OutboxRow } from './outbox.repository.js';
import { DeliveryError, type Sender } from './senders/types.js';

/**
 * Standard Webhooks' schedule: the first attempt is immediate; after the n-th failure the next
 * comes RETRY_DELAYS_MS[n-1] later (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h): ten attempts in all.
 */
export const RETRY_DELAYS_MS = [5_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
const BATCH = 50;

export type Senders = Record<OutboxKind, Sender>;

/** ±10% so that deliveries failing together do not all come back in the same second. */
const jitter = (ms: number) => Math.round(ms * (0.9 + Math.random() * 0.2));

async function deliver(ctx: AppContext, senders: Senders, row: OutboxRow): Promise<void> {
  const started = Date.now();
  let outcome: 'sent' | 'skipped' | 'failed';
  let statusCode: number | null = null;
  let error: string | null = null;
  let permanent = false;
  try {
    const r = await senders[row.kind](row);
    outcome = r.outcome;
    statusCode = r.statusCode ?? null;
    error = r.note ?? null;
  } catch (err) {
    outcome = 'failed';
    error = err instanceof Error ? err.message : String(err);
    if (err instanceof DeliveryError) ({ statusCode, permanent } = err);
  }
  metricsOf(ctx).deliveries.inc({ kind: row.kind, outcome });
  const now = ctx.clock.now();
  const retryIn = RETRY_DELAYS_MS[row.attempts - 1];
  const final = outcome !== 'failed' || permanent || retryIn === undefined;
  await ctx.transaction(async ({ db }) => {
    await recordAttempt(db, { outboxId: row.id, attempt: row.attempts, outcome, statusCode, error, durationMs: Date.now() - started, at: iso(now) });
    await settle(db, row.id, final ? outcome : 'pending', iso(new Date(now.getTime() + (final ? 0 : jitter(retryIn)))), outcome === 'sent' ? null : error, iso(now));
  });
}

/**
 * Sends what is due, once: claims a batch (with a lease long enough for the slowest attempt) and
 * delivers it concurrently. Returns how many were attempted. A worker that dies mid-send leaves
 * its rows `sending` until the lease ends; then any worker claims them again.
 */
export async function processDue(ctx: AppContext, senders: Senders, limit = BATCH): Promise<number> {
  const now = ctx.clock.now();
  const lease = iso(new Date(now.getTime() + 2 * ctx.config.webhookTimeoutMs + 30_000));
  const rows = await claimDue(ctx.db, ctx.database.dialect, iso(now), lease, limit);
  await Promise.all(rows.map((row) => deliver(ctx, senders, row)));
  return rows.length;
}

/**
 * The delivery worker: polls every OUTBOX_POLL_MS and is woken after each commit that queued a
 * delivery, so the first attempt is immediate. Never two runs at once; a run that finds a full
 * batch goes again at once. Returns the function that stops it (waiting for the running batch).
 */
export function startOutboxWorker(ctx: AppContext, senders: Senders): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    if (!stopped) timer = setTimeout(run, ctx.config.outboxPollMs);
  };
  function run(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = (async () => {
      try {
        do {
          again = false;
          if ((await processDue(ctx, senders)) >= BATCH) again = true;
        } while (again && !stopped);
      } catch (err) {
        ctx.log.error({ err }, 'delivery worker run failed');
      } finally {
        running = undefined;
        schedule();
      }
    })();
  }
  const unsubscribe = ctx.outbox.onWake(run);
  run();
  return async () => {
    stopped = true;
    unsubscribe();
    clearTimeout(timer);
    await running;
  };
}
