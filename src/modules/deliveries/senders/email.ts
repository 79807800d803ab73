import nodemailer from 'nodemailer';
import { escapeHtml } from '../../../lib/html.js';
import type { AppContext } from '../../../context.js';
import { invitationIcs, type Invitation } from '../ics.js';
import type { OutboxRow } from '../outbox.repository.js';
import { DeliveryError, type Sender } from './types.js';

interface EmailPayload {
  subject: string;
  text: string;
  ics?: Invitation;
  reply_to?: string;
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
  const transport = ctx.config.smtpUrl ? nodemailer.createTransport(ctx.config.smtpUrl) : undefined;
  return async (row: OutboxRow) => {
    const p = JSON.parse(row.payload) as EmailPayload;
    if (!transport) {
      ctx.log.info({ to: row.recipient, subject: p.subject, topic: row.topic }, `email not sent (SMTP_URL is not set):\n${p.text}`);
      return { outcome: 'skipped', note: 'SMTP_URL is not set' };
    }
    try {
      await transport.sendMail({
        from: ctx.config.mailFrom,
        to: row.recipient,
        subject: p.subject,
        text: p.text,
        html: toHtml(p.text),
        messageId: `<outbox-${row.id}@muster>`,
        ...(p.reply_to ? { replyTo: p.reply_to } : {}),
        ...(p.ics ? { icalEvent: { method: p.ics.method, filename: 'invite.ics', content: invitationIcs(p.ics) } } : {}),
      });
      return { outcome: 'sent' };
    } catch (err) {
      const code = (err as { responseCode?: number }).responseCode ?? null;
      // A 5xx SMTP reply for the recipient is permanent (no such mailbox); anything else is retried.
      throw new DeliveryError(err instanceof Error ? err.message : String(err), code, code !== null && code >= 550 && code < 560);
    }
  };
}
