import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { notFound } from '../../lib/errors.js';
import type { IncidentStatus } from '../../db/schema.js';
import { queueEmail } from '../deliveries/index.js';
import type { Tx } from '../../db/transaction.js';
import { reporterOf, reporterThread } from './reporter.repository.js';
import { orgAccess } from '../orgs/index.js';
import { findOrgName } from '../orgs/index.js';
import { findByToken, touchIncident, type IncidentRow } from './incidents.repository.js';
import type { Reply, StatusPage } from './incidents.schemas.js';
import { findVisible } from './incidents.service.js';
import { publishIncident } from './publish.js';
import { replyAddress } from './reply-address.js';
import { recordTimeline, timelineOf } from './timeline.js';
import { findReply, insertReply, listReplies as listRows, type ReplyRow } from './replies.repository.js';

export const toReply = (r: ReplyRow): Reply => ({
  id: r.id,
  incident_id: r.incident_id,
  body: r.body,
  public: r.public === 1,
  author_id: r.author_id,
  author_name: r.author_name,
  created_at: r.created_at,
});

export async function listReplies(ctx: AppContext, actor: Actor, incidentId: number) {
  const incident = await findVisible(ctx, actor, incidentId);
  return { replies: (await listRows(ctx.db, incident.id, false)).map(toReply) };
}

/**
 * A reply is internal unless `public: true`; only public replies reach the status page, and a public
 * reply to an incident someone reported by email is emailed to them (replying to that email adds to
 * the incident, as their first mail's acknowledgement says).
 */
export async function addReply(ctx: AppContext, actor: Actor, incidentId: number, input: { body: string; public?: boolean | undefined }) {
  const incident = await findVisible(ctx, actor, incidentId);
  await orgAccess(ctx, actor, { id: incident.org_id }, { write: true });
  return ctx.transaction(async (tx) => {
    const reply = await recordReply(ctx, tx, incident, { body: input.body, public: input.public ?? false, authorId: actor.userId });
    if (reply.public) {
      const reporter = await reporterOf(tx.db, incident.id);
      if (reporter !== undefined) {
        const status = incident.livemode === 1 ? `\n\nFollow it here: ${ctx.config.publicUrl}/incidents/status/${incident.customer_token}` : '';
        const text = `${reply.author_name ?? 'The team'} replied to incident #${incident.id}:\n\n${reply.body}\n\nReply to this email to add to it.${status}\n`;
        // A person wrote it (no Auto-Submitted), to the reporter's answer address, threaded under their mail (issue 32).
        await queueEmail(ctx, tx, {
          to: reporter.answerTo,
          replyTo: replyAddress(ctx, incident.id),
          subject: `[#${incident.id}] Re: ${incident.title}`,
          text,
          topic: 'incident.reply',
          orgId: incident.org_id,
          mode: actor.mode,
          autoSubmitted: false,
          thread: await reporterThread(tx.db, incident.id),
        });
      }
    }
    return reply;
  });
}

/**
 * Writes a reply in the caller's transaction: the row, the incident's `updated_at`, the
 * `incident.reply` broadcast and the `reply` timeline event. `email` is what an emailed reply adds
 * (inbound email: its sender and how far it is proven); the broadcast then says `via: 'email'`.
 */
export async function recordReply(
  ctx: AppContext,
  tx: Tx,
  incident: IncidentRow,
  r: { body: string; public: boolean; authorId: number | null },
  email?: Record<string, unknown>,
): Promise<Reply> {
  const now = iso(ctx.clock.now());
  const id = await insertReply(tx.db, { incidentId: incident.id, body: r.body, public: r.public, authorId: r.authorId, now });
  await touchIncident(tx.db, incident, now);
  // The same record the REST answer has (author_name included), and how it came.
  const reply = toReply(await findReply(tx.db, id));
  publishIncident(ctx, tx, incident, 'incident.reply', email ? Object.assign(reply, { via: 'email' }) : reply);
  const data = email ? { reply_id: id, public: r.public, body: r.body, via: 'email', ...email } : { reply_id: reply.id, public: reply.public, body: reply.body };
  await recordTimeline(ctx, tx, incident, 'reply', r.authorId, data);
  return reply;
}

/** What the customer sees: title, status and public replies. Test-mode incidents have no public page. */
export async function statusPage(ctx: AppContext, token: string): Promise<StatusPage> {
  const incident = await findByToken(ctx.db, token);
  if (!incident) throw notFound();
  const replies = await listRows(ctx.db, incident.id, true);
  // Of the timeline only status changes are public: never internal replies, assignees or positions.
  const changes = await timelineOf(ctx, incident.id, ['status_changed']);
  return {
    org_name: (await findOrgName(ctx.db, incident.org_id)) ?? '',
    title: incident.title,
    status: incident.status,
    created_at: incident.created_at,
    updated_at: incident.updated_at,
    replies: replies.map((r) => ({ body: r.body, author_name: r.author_name, created_at: r.created_at })),
    status_changes: changes.map((e) => ({ from: e.data.from as IncidentStatus, to: e.data.to as IncidentStatus, at: e.at })),
  };
}
