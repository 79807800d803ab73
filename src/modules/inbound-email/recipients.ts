import type { AppContext } from '../../context.js';
import { incidentById, incidentOfReply, reporterOf, type IncidentRow } from '../incidents/index.js';
import { findByEmailToken, type IntegrationRow } from '../integrations/index.js';
import { memberByEmail } from './inbound.repository.js';
import { domainOf } from './message.js';

/** An address of ours: an integration's, or an incident's reply address. */
export type Target = { kind: 'integration'; integration: IntegrationRow } | { kind: 'reply'; incident: IncidentRow };

/** An SMTP refusal: the reply code and its text (RFC 5321 and enhanced status codes, RFC 3463). */
export interface Refusal {
  code: number;
  message: string;
}

/** Who an emailed reply is from, as far as the message proves it. */
export interface Replier {
  /** The member it is attributed to: only with an authenticated From:. */
  authorId: number | null;
  public: boolean;
  /** Why: `reporter`, `member` (authenticated), or `unverified` (a member's address, From: not authenticated). */
  as: 'reporter' | 'member' | 'unverified';
}

const unknown: Refusal = { code: 550, message: '5.1.1 No such recipient here' };
export const strangerRefusal: Refusal = { code: 550, message: '5.7.1 Only the reporter and members of the organization may reply to this incident' };

/**
 * Decides an address at RCPT time, so unknown addresses and revoked integrations are refused in
 * the SMTP dialogue (never a bounce later). Who the sender is comes from the message's From:, so
 * that is decided once its headers are in (`senderAllowed`, `replierOf`).
 */
export async function resolveRecipient(ctx: AppContext, address: string): Promise<Target | Refusal> {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at).toLowerCase();
  if (at <= 0 || address.slice(at + 1).toLowerCase() !== ctx.config.inboundEmailDomain) return unknown;
  if (local.startsWith('reply+')) {
    const id = incidentOfReply(ctx, local);
    const incident = id === undefined ? undefined : await incidentById(ctx.db, id);
    return incident ? { kind: 'reply', incident } : unknown;
  }
  const integration = await findByEmailToken(ctx.db, local);
  return integration ? { kind: 'integration', integration } : unknown;
}

/**
 * `allowed_senders` (issue 32): judged on the message's From:, never the envelope (forwarding
 * rewrites that, SRS), and only when From: is authenticated: anyone can write any From:.
 */
export function senderAllowed(integration: IntegrationRow, sender: string | undefined, authenticated: boolean): Refusal | undefined {
  if (!integration.allowed_senders) return undefined;
  const allowed = integration.allowed_senders;
  const domain = sender ? domainOf(sender) : '';
  if (!sender || !allowed.some((d) => domain === d || domain.endsWith(`.${d}`))) return { code: 550, message: '5.7.1 Sender not allowed for this address' };
  if (!authenticated) return { code: 550, message: '5.7.1 Sender not authenticated (DKIM or SPF aligned with From:) for this address' };
  return undefined;
}

/**
 * Who replies to an incident by email (issues 31 F9 and 32): the reporter (their From:, or the
 * Reply-To: their report named) writes a public reply; a member's address writes an internal
 * reply as that member only when From: is authenticated, else an external, unverified reply that
 * stays off the status page. Anyone else is refused (undefined).
 */
export async function replierOf(ctx: AppContext, incident: IncidentRow, sender: string | undefined, authenticated: boolean): Promise<Replier | undefined> {
  if (!sender) return undefined;
  const reporter = await reporterOf(ctx.db, incident.id);
  if (reporter && (reporter.sender === sender || reporter.answerTo === sender)) return { authorId: null, public: true, as: 'reporter' };
  const member = await memberByEmail(ctx.db, incident.org_id, sender);
  if (member === undefined) return undefined;
  return authenticated ? { authorId: member, public: false, as: 'member' } : { authorId: null, public: false, as: 'unverified' };
}

export const isRefusal = (t: Target | Refusal): t is Refusal => 'code' in t;
