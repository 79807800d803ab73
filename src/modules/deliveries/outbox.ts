import type { AppContext } from '../../context.js';
import type { Mode, OutboxKind, OutboxStatus } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { enqueue } from './outbox.repository.js';

export interface Delivery {
  kind: OutboxKind;
  topic: string;
  recipient: string;
  payload: unknown;
  mode: Mode;
  userId?: number | null;
  orgId?: number | null;
  /** Recorded as skipped: there is nowhere to send it (a user without a phone). */
  skip?: boolean;
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
    { kind: d.kind, topic: d.topic, orgId: d.orgId ?? null, userId: d.userId ?? null, mode: d.mode, recipient: d.recipient, payload: d.payload, status },
    iso(ctx.clock.now()),
  );
  if (status === 'pending') tx.onCommit(() => ctx.outbox.wake());
}
