import type { ParsedMail } from 'mailparser';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { queueEmail } from '../deliveries/index.js';
import { incidentById, recordReply, replyAddress, type IncidentRow } from '../incidents/index.js';
import { findIntegrationById, type IntegrationRow } from '../integrations/index.js';
import { trigger } from '../integrations/index.js';
import { attachCapture } from '../signals/index.js';
import { storeUpload } from '../uploads/index.js';
import { failInbound, finishInbound, findInbound, pendingIds, type InboundRow } from './inbound.repository.js';
import { stripReply } from './mail-text.js';
import { clean, readHead } from './message.js';
import { replierOf } from './recipients.js';
import { mailparser } from './parsers.js';

const MAX_ATTEMPTS = 3;

/** Thrown inside a transaction when another worker processed the message first: rolls back. */
class AlreadyDone extends Error {}

/** The thread a message belongs to: the first of References, else In-Reply-To, else its own id. */
function threadOf(mail: ParsedMail, row: InboundRow): string {
  const refs = mail.references === undefined ? [] : Array.isArray(mail.references) ? mail.references : [mail.references];
  return clean(`email:${(refs[0] ?? mail.inReplyTo ?? row.message_id ?? mail.messageId ?? `inbound-${row.id}`).slice(0, 240)}`);
}

/** Image attachments stored like uploads (re-encoded, metadata stripped); anything unreadable is skipped. */
async function storeImages(ctx: AppContext, mail: ParsedMail): Promise<{ url: string; filename: string | null }[]> {
  const stored = [];
  for (const a of mail.attachments) {
    if (!a.contentType.startsWith('image/')) continue;
    try {
      stored.push({ url: (await storeUpload(ctx, a.content)).image_url, filename: a.filename ? clean(a.filename).slice(0, 500) : null });
    } catch (err) {
      ctx.log.info({ err, filename: a.filename }, 'inbound email: image attachment skipped');
    }
  }
  return stored;
}

/**
 * The headers read at DATA time; rows stored before migration 0023 read them now (their From: is
 * then taken as unauthenticated: it was never checked).
 */
async function headOf(row: InboundRow, mail: ParsedMail): Promise<{ sender: string | null; answerTo: string | null; subject: string }> {
  if (row.sender !== null || row.subject !== null) return { sender: row.sender, answerTo: row.answer_to, subject: row.subject ?? '' };
  const head = await readHead(Buffer.from(row.raw, 'base64'), row.mail_from);
  return { sender: head.sender ?? null, answerTo: head.answerTo ?? null, subject: head.subject ?? clean(mail.subject ?? '') };
}

async function openFromMail(ctx: AppContext, row: InboundRow, integration: IntegrationRow, mail: ParsedMail): Promise<number> {
  const images = await storeImages(ctx, mail);
  const head = await headOf(row, mail);
  const subject = head.subject.trim() || '(no subject)';
  const description = clean(mail.text ?? '').trim().slice(0, 20_000) || null;
  return ctx.transaction(async (tx) => {
    const placed = await trigger(
      ctx,
      integration,
      { ref: threadOf(mail, row), title: subject, description, priority: 'normal', source: 'email', tool: 'email', data: { from: head.sender ?? row.mail_from, authenticated: row.authenticated === 1, subject: subject.slice(0, 200) } },
      tx,
    );
    const incident = placed.incident;
    if (!(await finishInbound(tx.db, row.id, incident.id, iso(ctx.clock.now())))) throw new AlreadyDone();
    for (const image of images) await attachCapture(ctx, tx, incident, { imageUrl: image.url, note: image.filename, meta: { source: 'email', inbound_email_id: row.id } });
    if (placed.created && head.answerTo) await acknowledgeReporter(ctx, tx, row, head.answerTo, incident.id, subject);
    return incident.id;
  });
}

/**
 * Tells the reporter their mail became an incident; replying to it adds to the incident. An
 * automatic reply (RFC 3834: `Auto-Submitted: auto-replied`), threaded under their message.
 */
async function acknowledgeReporter(ctx: AppContext, tx: Tx, row: InboundRow, to: string, incidentId: number, subject: string) {
  const text = `We received your report and opened incident #${incidentId}.\n\nReply to this email to add to it.\n`;
  const thread = row.message_id ? { inReplyTo: row.message_id, references: [row.message_id] } : undefined;
  await queueEmail(ctx, tx, {
    to,
    replyTo: replyAddress(ctx, incidentId),
    subject: `[#${incidentId}] ${subject}`,
    text,
    topic: 'incident.email_received',
    orgId: row.org_id,
    mode: row.livemode === 1 ? 'live' : 'test',
    autoSubmitted: 'auto-replied',
    thread,
  });
}

async function applyReply(ctx: AppContext, row: InboundRow, mail: ParsedMail): Promise<number> {
  const target = await incidentById(ctx.db, row.reply_to_incident_id!);
  if (!target) throw new Error('the incident was deleted');
  const head = await headOf(row, mail);
  const replier = await replierOf(ctx, target, head.sender ?? undefined, row.authenticated === 1);
  if (!replier) throw new Error('the sender may no longer reply to this incident');
  const body = stripReply(clean(mail.text ?? '')).slice(0, 20_000) || '(empty reply)';
  const now = iso(ctx.clock.now());
  return ctx.transaction(async (tx) => {
    const incident: IncidentRow | undefined = await incidentById(tx.db, target.id);
    if (!incident || !(await finishInbound(tx.db, row.id, incident.id, now))) throw new AlreadyDone();
    await recordReply(ctx, tx, incident, { body, public: replier.public, authorId: replier.authorId }, {
      from: head.sender ?? row.mail_from,
      authenticated: row.authenticated === 1,
      ...(replier.as === 'unverified' ? { unverified: true } : {}),
    });
    return incident.id;
  });
}

/** Turns one stored message into an incident or a reply; failures are kept with the reason. */
export async function processInbound(ctx: AppContext, id: number): Promise<void> {
  const row = await findInbound(ctx.db, id);
  if (!row || row.status !== 'pending') return;
  try {
    const { simpleParser } = await mailparser();
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
