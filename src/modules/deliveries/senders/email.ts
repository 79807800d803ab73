import { createHmac } from 'node:crypto';
import type * as Nodemailer from 'nodemailer';
import { lazyRequire } from '../../../lib/lazy-require.js';
import { escapeHtml } from '../../../lib/html.js';
import type { AppContext } from '../../../context.js';
import { mailDomain } from '../email.js';
import { invitationIcs, type Invitation } from '../ics.js';
import type { OutboxRow } from '../outbox.repository.js';
import { DeliveryError, type Sender } from './types.js';

// nodemailer (36 modules) loads with the first email sent, not at every start.
const nodemailer = lazyRequire<typeof Nodemailer>('nodemailer');

interface EmailPayload {
  subject: string;
  text: string;
  ics?: Invitation;
  reply_to?: string;
  /** Set when queued (emails queued before it was: see legacyMessageId). */
  message_id?: string;
  auto_submitted?: string;
  in_reply_to?: string;
  references?: string[];
}

/**
 * The Message-ID of an email queued before ids were fixed at queueing: the row id made unique to
 * this installation by the instance secret, under its own domain, the same on every retry.
 */
function legacyMessageId(ctx: AppContext, rowId: number): string {
  const tag = createHmac('sha256', ctx.secret).update(`message-id:${rowId}`).digest('hex').slice(0, 20);
  return `<outbox-${rowId}.${tag}@${mailDomain(ctx.config)}>`;
}


/** The HTML part: the text, escaped, with its links clickable. */
function toHtml(text: string): string {
  const body = escapeHtml(text)
    .replace(/https?:\/\/[^\s<]+/g, (url) => `<a href="${url}">${url}</a>`)
    .replace(/\n/g, '<br>\n');
  return `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">${body}</body></html>`;
}

/**
 * Sends emails through SMTP_URL. Without it an email is printed to the log and recorded as
 * skipped (not sent), so a local user can still follow its links and codes. The Message-ID is
 * fixed per delivery, so a retry after a crash is recognisable as the same message.
 */
export function emailSender(ctx: AppContext): Sender {
  const smtpUrl = ctx.config.smtpUrl;
  // Made with the first email sent.
  let transport: Nodemailer.Transporter | undefined;
  return async (row: OutboxRow) => {
    const p = row.payload as EmailPayload;
    // Nowhere to send it (a bounce's empty return path, before such mail was ignored): no retry can help.
    if (!row.recipient.trim()) throw new DeliveryError('no recipient', null, true);
    if (!smtpUrl) {
      ctx.log.info({ to: row.recipient, subject: p.subject, topic: row.topic }, `email not sent (SMTP_URL is not set):\n${p.text}`);
      return { outcome: 'skipped', note: 'SMTP_URL is not set' };
    }
    try {
      transport ??= nodemailer().createTransport(smtpUrl);
      await transport.sendMail({
        from: ctx.config.mailFrom,
        to: row.recipient,
        subject: p.subject,
        text: p.text,
        html: toHtml(p.text),
        messageId: p.message_id ?? legacyMessageId(ctx, row.id),
        ...(p.auto_submitted ? { headers: { 'Auto-Submitted': p.auto_submitted } } : {}),
        ...(p.in_reply_to ? { inReplyTo: p.in_reply_to, references: p.references ?? [p.in_reply_to] } : {}),
        ...(p.reply_to ? { replyTo: p.reply_to } : {}),
        ...(p.ics ? { icalEvent: { method: p.ics.method, filename: 'invite.ics', content: invitationIcs(p.ics) } } : {}),
      });
      return { outcome: 'sent' };
    } catch (err) {
      const code = (err as { responseCode?: number }).responseCode ?? null;
      // A 5xx SMTP reply for the recipient is permanent (no such mailbox), and so is an address
      // nodemailer cannot send to at all (EENVELOPE without a server reply: "No recipients
      // defined"); anything else is retried (a 4xx refusal of every recipient is EENVELOPE too).
      const envelope = (err as { code?: string }).code === 'EENVELOPE' && code === null;
      throw new DeliveryError(err instanceof Error ? err.message : String(err), code, envelope || (code !== null && code >= 550 && code < 560));
    }
  };
}
