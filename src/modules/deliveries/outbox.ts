import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { Mode, OutboxKind, OutboxStatus } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { lockUsers } from '../../db/locks.js';
import { DAY } from '../../lib/clock.js';
import { enqueueMany, phoneAlertsSince, type NewDelivery } from './outbox.repository.js';

export interface Delivery {
  kind: OutboxKind;
  topic: string;
  recipient: string;
  payload: unknown;
  mode: Mode;
  userId?: number | null;
  orgId?: number | null;
  /** Recorded as skipped, with the reason: there is nowhere to send it, or a cap is reached. */
  skip?: string;
}

/**
 * Queues a delivery in the caller's transaction: it exists exactly when the operation does and
 * never delays or fails it. In test mode only webhooks are sent; emails, pushes and phone alerts
 * are recorded as suppressed.
 */
export async function queueDelivery(ctx: AppContext, tx: Tx, d: Delivery): Promise<void> {
  const row = newDelivery(d);
  // Nothing waits for the row's id: on PostgreSQL it travels with the transaction's next statement (db/pipeline.ts).
  await enqueueMany(tx.db, [row], iso(ctx.clock.now()));
  if (row.status === 'pending') tx.onCommit(() => ctx.outbox.wake());
}

/** queueDelivery for several deliveries, in one statement. */
export async function queueDeliveries(ctx: AppContext, tx: Tx, ds: readonly Delivery[]): Promise<void> {
  const rows = ds.map(newDelivery);
  await enqueueMany(tx.db, rows, iso(ctx.clock.now()));
  if (rows.some((r) => r.status === 'pending')) tx.onCommit(() => ctx.outbox.wake());
}

/**
 * A webhook's `webhook-id` (Standard Webhooks), fixed here so every retry carries the same one and
 * no two messages of any installation share one (receivers drop ids they have seen; issue 32).
 */
const webhookId = () => `msg_${randomUUID().replace(/-/g, '')}`;

function newDelivery(d: Delivery): NewDelivery {
  const status: OutboxStatus = d.skip ? 'skipped' : d.mode === 'test' && d.kind !== 'webhook' ? 'suppressed' : 'pending';
  const payload = d.kind === 'webhook' && typeof d.payload === 'object' && d.payload !== null ? Object.assign({ webhook_id: webhookId() }, d.payload) : d.payload;
  return { kind: d.kind, topic: d.topic, orgId: d.orgId ?? null, userId: d.userId ?? null, mode: d.mode, recipient: d.recipient, payload, status, note: d.skip ?? null };
}

/**
 * Queues a phone alert to a user, deciding the daily cap here, in the operation's transaction and
 * under a lock on the user: alerts fired together cannot all pass the count. Beyond the cap, or
 * without a phone number, the alert is recorded as skipped.
 */
export async function queuePhoneAlert(ctx: AppContext, tx: Tx, a: PhoneAlert) {
  await queueDelivery(ctx, tx, await phoneAlert(ctx, tx, a));
}

export interface PhoneAlert {
  userId: number;
  phone: string | null;
  topic: string;
  mode: Mode;
  orgId: number;
  payload: unknown;
}

/**
 * The phone alert as queuePhoneAlert would queue it (the cap decided under the user's lock), for a
 * caller that queues it with other deliveries in one statement (queueDeliveries) in the same transaction.
 */
export async function phoneAlert(ctx: AppContext, tx: Tx, a: PhoneAlert): Promise<Delivery> {
  // Without a phone number there is nothing to count, and no lock: creations for one user (an
  // integration's default assignee, an API client) would otherwise queue behind each other on PostgreSQL.
  if (a.phone !== null) await lockUsers(tx.db, ctx.database.dialect, [a.userId]);
  const since = iso(new Date(ctx.clock.now().getTime() - DAY));
  const capped = a.phone !== null && (await phoneAlertsSince(tx.db, a.userId, since)) >= ctx.config.phoneDailyCap;
  const skip = a.phone === null ? 'no phone number' : capped ? `daily cap of ${ctx.config.phoneDailyCap} reached` : undefined;
  return { kind: 'phone', topic: a.topic, mode: a.mode, userId: a.userId, orgId: a.orgId, recipient: a.phone ?? '', payload: a.payload, ...(skip ? { skip } : {}) };
}
