import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { forbidden } from '../../lib/errors.js';
import { fetchWindow, pageOf } from '../../lib/paging.js';
import { adminOrgIds } from '../integrations/index.js';
import { actorScope } from '../orgs/index.js';
import { listInbound } from './inbound.repository.js';
import type { InboundEmail, ListInboundQuery } from './inbound.schemas.js';

type Listed = Awaited<ReturnType<typeof listInbound>>[number];

const toInboundEmail = (r: Listed): InboundEmail => ({
  id: r.id,
  org_id: r.org_id,
  livemode: r.livemode === 1,
  integration_id: r.integration_id,
  incident_id: r.incident_id ?? r.reply_to_incident_id,
  status: r.status,
  error: r.error,
  attempts: r.attempts,
  from: r.sender,
  reply_to: r.answer_to,
  envelope_from: r.mail_from,
  to: r.rcpt_to,
  subject: r.subject,
  message_id: r.message_id,
  authenticated: r.authenticated === 1,
  auth: r.auth,
  size: r.size,
  raw_removed_at: r.raw_removed_at,
  received_at: r.created_at,
  processed_at: r.processed_at,
});

/**
 * What the inbound listener accepted for the orgs the caller administers, in the caller's mode,
 * newest first (issue 31 F7, issue 32): failed messages with their error, automatic mail kept as
 * `ignored` with why, and everything else. Nothing accepted disappears without a trace here.
 */
export async function listInboundEmails(ctx: AppContext, actor: Actor, q: ListInboundQuery) {
  const scope = await actorScope(ctx, actor, q.org_id);
  const admin = new Set(await adminOrgIds(ctx.db, actor.userId));
  if (q.org_id !== undefined && !admin.has(q.org_id)) throw forbidden();
  const w = fetchWindow(q);
  const rows = await listInbound(ctx.db, { ...scope, orgIds: scope.orgIds.filter((id) => admin.has(id)) }, { integrationId: q.integration_id, status: q.status }, w.limit, w.offset);
  const { items, ...page } = pageOf(rows, q, toInboundEmail);
  return { inbound_emails: items, ...page };
}
