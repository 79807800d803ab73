import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.js';
import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { queueDelivery, type Delivery } from './outbox.js';

/** RFC 3834: how an email came about. Absent (`false`) for a message a person wrote (a team reply relayed to the reporter). */
export type AutoSubmitted = 'auto-generated' | 'auto-replied' | false;

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
  /** Default `auto-generated`: vacation responders and list servers stay silent (RFC 3834). */
  autoSubmitted?: AutoSubmitted;
  /** The Message-IDs this email answers, so mail clients thread it: In-Reply-To and References. */
  thread?: { inReplyTo: string; references: string[] } | undefined;
}

/** The instance's own mail domain: MAIL_FROM's, unless that is a bare host name (`localhost`), then PUBLIC_URL's. */
export function mailDomain(config: Config): string {
  const fromDomain = /@([^>\s]+)>?\s*$/.exec(config.mailFrom)?.[1]?.toLowerCase();
  if (fromDomain && fromDomain.includes('.')) return fromDomain;
  return new URL(config.publicUrl).hostname.toLowerCase() || fromDomain || 'localhost';
}

/**
 * A globally unique Message-ID under the instance's own domain (issue 32): fixed when the email is
 * queued, so every retry sends the same one, and never the same for two messages, whichever
 * instance or installation sent them (Gmail may drop a message whose id it has seen).
 */
export const newMessageId = (config: Config) => `<${randomUUID()}@${mailDomain(config)}>`;

/** An email as an outbox delivery, for callers that queue several deliveries in one statement (queueDeliveries). */
export function emailDelivery(config: Config, email: Email): Delivery {
  const auto = email.autoSubmitted ?? 'auto-generated';
  return {
    kind: 'email',
    topic: email.topic,
    userId: email.userId ?? null,
    orgId: email.orgId ?? null,
    mode: email.mode ?? 'live',
    recipient: email.to,
    payload: {
      subject: email.subject,
      text: email.text,
      message_id: newMessageId(config),
      ...(auto ? { auto_submitted: auto } : {}),
      ...(email.ics ? { ics: email.ics } : {}),
      ...(email.replyTo ? { reply_to: email.replyTo } : {}),
      ...(email.thread ? { in_reply_to: email.thread.inReplyTo, references: email.thread.references } : {}),
    },
  };
}

/** Queues an email in the outbox within the caller's transaction; the delivery worker sends it. */
export async function queueEmail(ctx: AppContext, tx: Tx, email: Email): Promise<void> {
  await queueDelivery(ctx, tx, emailDelivery(ctx.config, email));
}
