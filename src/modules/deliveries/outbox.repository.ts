import type { Kysely } from 'kysely';
import type { DB, OutboxKind, OutboxStatus } from '../../db/schema.js';
import { flag, type Mode } from '../../db/schema.js';

export interface NewDelivery {
  kind: OutboxKind;
  topic: string;
  orgId?: number | null;
  userId?: number | null;
  mode: Mode;
  recipient: string;
  payload: unknown;
  status?: OutboxStatus;
}

/** Queues a delivery in the caller's transaction, so it exists exactly when the operation does. */
export async function enqueue(db: Kysely<DB>, d: NewDelivery, nowIso: string): Promise<number> {
  const row = await db
    .insertInto('outbox')
    .values({
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
      last_error: null,
      created_at: nowIso,
      updated_at: nowIso,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
