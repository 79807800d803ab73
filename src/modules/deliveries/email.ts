import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { queueDelivery } from './outbox.js';

export interface Email {
  to: string;
  subject: string;
  text: string;
  topic: string;
  userId?: number | null;
  orgId?: number | null;
  mode?: Mode;
  /** Where replies go (incident emails: reply+<token>@INBOUND_EMAIL_DOMAIN). */
  replyTo?: string | undefined;
  /** A calendar invitation for the sender to attach (.ics). */
  ics?: Record<string, unknown>;
}

/** Queues an email in the outbox within the caller's transaction; the delivery worker sends it. */
export async function queueEmail(ctx: AppContext, tx: Tx, email: Email): Promise<void> {
  const mode = email.mode ?? 'live';
  await queueDelivery(ctx, tx, {
    kind: 'email',
    topic: email.topic,
    userId: email.userId ?? null,
    orgId: email.orgId ?? null,
    mode,
    recipient: email.to,
    payload: { subject: email.subject, text: email.text, ...(email.ics ? { ics: email.ics } : {}), ...(email.replyTo ? { reply_to: email.replyTo } : {}) },
  });
}
