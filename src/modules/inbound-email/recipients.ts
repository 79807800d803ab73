import type { AppContext } from '../../context.js';
import { lockIncident, type IncidentRow } from '../incidents/incidents.repository.js';
import { findByEmailToken, type IntegrationRow } from '../integrations/integrations.repository.js';
import { memberByEmail, reporterOf } from './inbound.repository.js';
import { incidentOfReply } from './reply-address.js';

export type Target =
  | { kind: 'integration'; integration: IntegrationRow }
  | { kind: 'reply'; incident: IncidentRow; authorId: number | null; public: boolean };

/** An SMTP refusal: the reply code and its text (RFC 5321 and enhanced status codes, RFC 3463). */
export interface Refusal {
  code: number;
  message: string;
}

const unknown: Refusal = { code: 550, message: '5.1.1 No such recipient here' };

function senderAllowed(integration: IntegrationRow, sender: string): boolean {
  if (!integration.allowed_senders) return true;
  const domain = sender.slice(sender.lastIndexOf('@') + 1).toLowerCase();
  const allowed = JSON.parse(integration.allowed_senders) as string[];
  return allowed.some((d) => domain === d || domain.endsWith(`.${d}`));
}

/**
 * Decides a recipient at RCPT time, so refusals happen in the SMTP dialogue (never a bounce
 * later): an integration's address (and its allowed senders), or a reply+<token> address (the
 * sender must be the reporter, whose reply is public, or a member of the org, internal).
 */
export async function resolveRecipient(ctx: AppContext, address: string, sender: string): Promise<Target | Refusal> {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at).toLowerCase();
  if (at <= 0 || address.slice(at + 1).toLowerCase() !== ctx.config.inboundEmailDomain) return unknown;
  const from = sender.toLowerCase();
  if (local.startsWith('reply+')) {
    const id = incidentOfReply(ctx, local);
    const incident = id === undefined ? undefined : await lockIncident(ctx.db, false, id);
    if (!incident) return unknown;
    if (from && (await reporterOf(ctx.db, incident.id))?.toLowerCase() === from) return { kind: 'reply', incident, authorId: null, public: true };
    const member = from ? await memberByEmail(ctx.db, incident.org_id, from) : undefined;
    if (member !== undefined) return { kind: 'reply', incident, authorId: member, public: false };
    return { code: 550, message: '5.7.1 Only the reporter and members of the organization may reply to this incident' };
  }
  const integration = await findByEmailToken(ctx.db, local);
  if (!integration) return unknown;
  if (!senderAllowed(integration, from)) return { code: 550, message: '5.7.1 Sender not allowed for this address' };
  return { kind: 'integration', integration };
}

export const isRefusal = (t: Target | Refusal): t is Refusal => 'code' in t;
