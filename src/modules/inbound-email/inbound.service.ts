import { simpleParser, type ParsedMail } from 'mailparser';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { queueEmail } from '../deliveries/email.js';
import { recordTimeline } from '../dispatch/timeline.js';
import { lockIncident, touchIncident } from '../incidents/incidents.repository.js';
import { CHANNEL } from '../incidents/incidents.service.js';
import { insertReply } from '../incidents/replies.repository.js';
import { findIntegrationById, type IntegrationRow } from '../integrations/integrations.repository.js';
import { trigger } from '../integrations/lifecycle.js';
import { insertSignal } from '../signals/signals.repository.js';
import { storeUpload } from '../uploads/uploads.service.js';
import { failInbound, finishInbound, findInbound, pendingIds, type InboundRow } from './inbound.repository.js';
import { stripReply } from './mail-text.js';
import { replyAddress } from './reply-address.js';
import { isRefusal, resolveRecipient } from './recipients.js';

const MAX_ATTEMPTS = 3;

/** Thrown inside a transaction when another worker processed the message first: rolls back. */
class AlreadyDone extends Error {}

/** The thread a message belongs to: the first of References, else In-Reply-To, else its own id. */
function threadOf(mail: ParsedMail, row: InboundRow): string {
  const refs = mail.references === undefined ? [] : Array.isArray(mail.references) ? mail.references : [mail.references];
  return `email:${(refs[0] ?? mail.inReplyTo ?? mail.messageId ?? `inbound-${row.id}`).slice(0, 240)}`;
}

/** Image attachments stored like uploads (re-encoded, metadata stripped); anything unreadable is skipped. */
async function storeImages(ctx: AppContext, mail: ParsedMail): Promise<{ url: string; filename: string | null }[]> {
  const stored = [];
  for (const a of mail.attachments) {
    if (!a.contentType.startsWith('image/')) continue;
    try {
      stored.push({ url: (await storeUpload(ctx, a.content)).image_url, filename: a.filename ?? null });
    } catch (err) {
      ctx.log.info({ err, filename: a.filename }, 'inbound email: image attachment skipped');
    }
  }
  return stored;
}

async function openFromMail(ctx: AppContext, row: InboundRow, integration: IntegrationRow, mail: ParsedMail): Promise<number> {
  const images = await storeImages(ctx, mail);
  const subject = mail.subject?.trim() || '(no subject)';
  return ctx.transaction(async (tx) => {
    const placed = await trigger(
      ctx,
      integration,
      { ref: threadOf(mail, row), title: subject, description: (mail.text ?? '').trim().slice(0, 20_000) || null, priority: 'normal', source: 'email', tool: 'email', data: { from: row.mail_from, subject: subject.slice(0, 200) } },
      tx,
    );
    const incident = placed.incident;
    if (!(await finishInbound(tx.db, row.id, incident.id, iso(ctx.clock.now())))) throw new AlreadyDone();
    for (const image of images) {
      await insertSignal(tx.db, { org_id: incident.org_id, livemode: incident.livemode, user_id: null, type: 'capture', lat: null, lng: null, accuracy: null, note: image.filename, image_url: image.url, ticket_id: incident.id, meta: JSON.stringify({ source: 'email', inbound_email_id: row.id }), created_at: iso(ctx.clock.now()) });
    }
    if (placed.created) await acknowledgeReporter(ctx, tx, row, incident.id, subject);
    return incident.id;
  });
}

/** Tells the reporter their mail became an incident; replying to it adds to the incident. */
async function acknowledgeReporter(ctx: AppContext, tx: Tx, row: InboundRow, incidentId: number, subject: string) {
  const text = `We received your report and opened incident #${incidentId}.\n\nReply to this email to add to it.\n`;
  await queueEmail(ctx, tx, { to: row.mail_from, replyTo: replyAddress(ctx, incidentId), subject: `[#${incidentId}] ${subject}`, text, topic: 'incident.email_received', orgId: row.org_id, mode: row.livemode === 1 ? 'live' : 'test' });
}

async function applyReply(ctx: AppContext, row: InboundRow, mail: ParsedMail): Promise<number> {
  const target = await resolveRecipient(ctx, row.rcpt_to, row.mail_from);
  if (isRefusal(target) || target.kind !== 'reply') throw new Error('the sender may no longer reply to this incident');
  const body = stripReply(mail.text ?? '') || '(empty reply)';
  const now = iso(ctx.clock.now());
  return ctx.transaction(async (tx) => {
    const incident = await lockIncident(tx.db, false, target.incident.id);
    if (!incident || !(await finishInbound(tx.db, row.id, incident?.id ?? null, now))) throw new AlreadyDone();
    const replyId = await insertReply(tx.db, { incidentId: incident.id, body, public: target.public, authorId: target.authorId, now });
    await touchIncident(tx.db, incident, now);
    const payload = { id: replyId, incident_id: incident.id, body, public: target.public, author_id: target.authorId, created_at: now, via: 'email' };
    ctx.events.publish(tx, { channel: CHANNEL, orgId: incident.org_id, mode: incident.livemode === 1 ? 'live' : 'test', type: 'incident.reply', payload });
    await recordTimeline(ctx, tx, incident, 'reply', target.authorId, { reply_id: replyId, public: target.public, body, via: 'email', from: row.mail_from });
    return incident.id;
  });
}

/** Turns one stored message into an incident or a reply; failures are kept with the reason. */
export async function processInbound(ctx: AppContext, id: number): Promise<void> {
  const row = await findInbound(ctx.db, id);
  if (!row || row.status !== 'pending') return;
  try {
    const mail = await simpleParser(Buffer.from(row.raw, 'base64'));
    if (row.reply_to_incident_id !== null) await applyReply(ctx, row, mail);
    else {
      const integration = row.integration_id === null ? undefined : await findIntegrationById(ctx.db, row.integration_id);
      if (!integration) throw new Error('the integration was deleted');
      await openFromMail(ctx, row, integration, mail);
    }
  } catch (err) {
    if (err instanceof AlreadyDone) return;
    ctx.log.warn({ err, inbound_email_id: id }, 'inbound email not processed');
    await failInbound(ctx.db, id, err instanceof Error ? err.message : String(err), MAX_ATTEMPTS, iso(ctx.clock.now()));
  }
}

/** Processes every stored message still pending (after a restart, or a failure worth retrying). */
export async function processPending(ctx: AppContext, limit = 100): Promise<number> {
  const ids = await pendingIds(ctx.db, limit);
  for (const id of ids) await processInbound(ctx, id);
  return ids.length;
}
