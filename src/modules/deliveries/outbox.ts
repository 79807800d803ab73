import type { AppContext } from '../../context.js';
import type { Mode, OutboxKind, OutboxStatus } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { lockUsers } from '../../db/locks.js';
import { DAY } from '../../lib/clock.js';
import { enqueue, phoneAlertsSince } from './outbox.repository.js';

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
  const status: OutboxStatus = d.skip ? 'skipped' : d.mode === 'test' && d.kind !== 'webhook' ? 'suppressed' : 'pending';
  await enqueue(
    tx.db,
    { kind: d.kind, topic: d.topic, orgId: d.orgId ?? null, userId: d.userId ?? null, mode: d.mode, recipient: d.recipient, payload: d.payload, status, note: d.skip ?? null },
    iso(ctx.clock.now()),
  );
  if (status === 'pending') tx.onCommit(() => ctx.outbox.wake());
}

/**
 * Queues a phone alert to a user, deciding the daily cap here, in the operation's transaction and
 * under a lock on the user: alerts fired together cannot all pass the count. Beyond the cap, or
 * without a phone number, the alert is recorded as skipped.
 */
export async function queuePhoneAlert(ctx: AppContext, tx: Tx, a: { userId: number; phone: string | null; topic: string; mode: Mode; orgId: number; payload: unknown }) {
  await lockUsers(tx.db, ctx.database.dialect, [a.userId]);
  const since = iso(new Date(ctx.clock.now().getTime() - DAY));
  const capped = a.phone !== null && (await phoneAlertsSince(tx.db, a.userId, since)) >= ctx.config.phoneDailyCap;
  const skip = a.phone === null ? 'no phone number' : capped ? `daily cap of ${ctx.config.phoneDailyCap} reached` : undefined;
  await queueDelivery(ctx, tx, { kind: 'phone', topic: a.topic, mode: a.mode, userId: a.userId, orgId: a.orgId, recipient: a.phone ?? '', payload: a.payload, ...(skip ? { skip } : {}) });
}
