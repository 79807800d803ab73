import { sql, type Kysely, type Selectable } from 'kysely';
import type { DialectName } from '../../db/database.js';
import type { AttemptOutcome, DB, OutboxKind, OutboxStatus, OutboxTable } from '../../db/schema.js';
import { flag, type Mode } from '../../db/schema.js';
import { insertRows } from '../../db/fixed.js';
import { writeWithNext } from '../../db/pipeline.js';

/** A claimed delivery as its sender sees it: the payload as the value queued (stored as JSON text). */
export type OutboxRow = Omit<Selectable<OutboxTable>, 'payload'> & { payload: unknown };

export interface NewDelivery {
  kind: OutboxKind;
  topic: string;
  orgId?: number | null;
  userId?: number | null;
  mode: Mode;
  recipient: string;
  payload: unknown;
  status?: OutboxStatus;
  /** Why it will not be sent, for a delivery recorded as skipped. */
  note?: string | null;
}

/**
 * Queues deliveries in the caller's transaction, so they exist exactly when the operation does: one INSERT
 * statement (a creation's push and phone alert), sent with the transaction's next statement on PostgreSQL
 * (nothing waits for their ids).
 */
export async function enqueueMany(db: Kysely<DB>, ds: readonly NewDelivery[], nowIso: string): Promise<void> {
  // Compiled once per row count (db/fixed.ts): a creation queues the same two rows each time.
  if (ds.length > 0) await insertRows(db, 'outbox', ds.map((d) => outboxRow(d, nowIso)), 'later');
}

function outboxRow(d: NewDelivery, nowIso: string) {
  return {
      kind: d.kind,
      topic: d.topic,
      org_id: d.orgId ?? null,
      user_id: d.userId ?? null,
      livemode: flag(d.mode === 'live'),
      recipient: d.recipient,
      payload: JSON.stringify(d.payload),
      status: d.status ?? 'pending',
      attempts: 0,
      next_attempt_at: nowIso,
      last_error: d.note ?? null,
      created_at: nowIso,
      updated_at: nowIso,
  };
}

/**
 * Claims up to `limit` due deliveries for one worker: pending ones whose time has come, and
 * `sending` ones whose lease ran out (their worker died mid-send). Each claim takes a lease and
 * counts an attempt. On PostgreSQL, SKIP LOCKED lets several workers claim disjoint rows; SQLite
 * has one writer, so the statement is already atomic.
 */
export async function claimDue(db: Kysely<DB>, dialect: DialectName, nowIso: string, leaseUntilIso: string, limit: number): Promise<OutboxRow[]> {
  let due = db
    .selectFrom('outbox')
    .select('id')
    .where('status', 'in', ['pending', 'sending'])
    .where('next_attempt_at', '<=', nowIso)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  return db
    .updateTable('outbox')
    .set((eb) => ({ status: 'sending', next_attempt_at: leaseUntilIso, attempts: eb('attempts', '+', 1), updated_at: nowIso }))
    .where('id', 'in', due)
    .returningAll()
    .execute()
    .then((rows) => rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) as unknown })));
}

export async function recordAttempt(
  db: Kysely<DB>,
  a: { outboxId: number; attempt: number; outcome: AttemptOutcome; statusCode: number | null; error: string | null; durationMs: number; at: string },
): Promise<void> {
  // Nothing waits for it: on PostgreSQL it travels with the transaction's next statement (db/pipeline.ts).
  const insert = db
    .insertInto('outbox_attempts')
    .values({ outbox_id: a.outboxId, attempt: a.attempt, outcome: a.outcome, status_code: a.statusCode, error: a.error, duration_ms: a.durationMs, created_at: a.at });
  await writeWithNext(db, insert);
}

/**
 * Settles a claimed delivery: final (`sent`, `failed`, `skipped`...) or back to `pending` at `nextAttemptAt`.
 * Nothing waits for it (a row no longer `sending`, reclaimed after its lease, is left to its new claimer): on
 * PostgreSQL it travels with the transaction's next statement, so an attempt's record and settling are one round trip.
 */
export async function settle(db: Kysely<DB>, id: number, status: OutboxStatus, nextAttemptAt: string, lastError: string | null, nowIso: string) {
  const update = db
    .updateTable('outbox')
    .set({ status, next_attempt_at: nextAttemptAt, last_error: lastError, updated_at: nowIso })
    .where('id', '=', id)
    .where('status', '=', 'sending');
  await writeWithNext(db, update);
}

export async function listForUser(db: Kysely<DB>, userId: number, mode: Mode, limit: number, offset: number) {
  return db
    .selectFrom('outbox')
    .selectAll()
    .where('user_id', '=', userId)
    .where('livemode', '=', flag(mode === 'live'))
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function attemptsOf(db: Kysely<DB>, ids: number[]) {
  if (ids.length === 0) return [];
  return db.selectFrom('outbox_attempts').selectAll().where('outbox_id', 'in', ids).orderBy('outbox_id').orderBy('attempt').execute();
}

/** Puts a failed delivery of this user and mode back in the queue; false when there is none. */
export async function requeueFailed(db: Kysely<DB>, id: number, userId: number, mode: Mode, nowIso: string): Promise<boolean> {
  const r = await db
    .updateTable('outbox')
    .set({ status: 'pending', next_attempt_at: nowIso, updated_at: nowIso })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('livemode', '=', flag(mode === 'live'))
    .where('status', '=', 'failed')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Phone alerts queued to a user since a time that were not skipped (what the daily cap counts). */
export async function phoneAlertsSince(db: Kysely<DB>, userId: number, sinceIso: string): Promise<number> {
  const r = await db
    .selectFrom('outbox')
    .select(sql<number>`count(*)`.as('n'))
    .where('kind', '=', 'phone')
    .where('user_id', '=', userId)
    .where('status', 'not in', ['skipped', 'suppressed'])
    .where('created_at', '>=', sinceIso)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
