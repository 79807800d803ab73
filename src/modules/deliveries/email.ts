import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { queueDelivery, type Delivery } from './outbox.js';

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

/** An email as an outbox delivery, for callers that queue several deliveries in one statement (queueDeliveries). */
export function emailDelivery(email: Email): Delivery {
  return {
    kind: 'email',
    topic: email.topic,
    userId: email.userId ?? null,
    orgId: email.orgId ?? null,
    mode: email.mode ?? 'live',
    recipient: email.to,
    payload: { subject: email.subject, text: email.text, ...(email.ics ? { ics: email.ics } : {}), ...(email.replyTo ? { reply_to: email.replyTo } : {}) },
  };
}

/** Queues an email in the outbox within the caller's transaction; the delivery worker sends it. */
export async function queueEmail(ctx: AppContext, tx: Tx, email: Email): Promise<void> {
  await queueDelivery(ctx, tx, emailDelivery(email));
}
