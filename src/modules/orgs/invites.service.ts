import type { AppContext } from '../../context.js';
import { userRowChanged } from '../users/index.js';
import type { Role } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { randomToken, sha256 } from '../../lib/crypto.js';
import { forbidden, notFound } from '../../lib/errors.js';
import { queueEmail } from '../deliveries/index.js';
import { proveEmail } from './email-proof.js';
import { findUserById } from '../users/index.js';
import { INVITE_TTL_MS } from './invite-ttl.js';
import * as invites from './invites.repository.js';
import { membershipBegan } from './access.js';

export { INVITE_TTL_MS };

const expiresAt = (createdAt: string) => iso(new Date(new Date(createdAt).getTime() + INVITE_TTL_MS));

/**
 * Creates or refreshes the invite of an email and emails its link. Only the token's hash is
 * stored; the link is the proof that whoever opens it reads that mailbox.
 */
export async function sendInvite(ctx: AppContext, tx: Tx, i: { org: { id: number; name: string }; email: string; role: Role; invitedBy: number }) {
  const token = randomToken(24);
  await invites.upsertInvite(tx.db, { orgId: i.org.id, email: i.email, role: i.role, invitedBy: i.invitedBy, now: iso(ctx.clock.now()), tokenHash: sha256(token) });
  // Who invites and to what, in the subject and the first line: an unexplained invite looks like spam.
  const inviter = await findUserById(tx.db, i.invitedBy);
  const who = inviter ? `${inviter.name} (${inviter.email})` : 'Someone';
  await queueEmail(ctx, tx, {
    to: i.email,
    topic: 'org.invite',
    orgId: i.org.id,
    subject: `${inviter?.name ?? 'Someone'} invited you to ${i.org.name} on Muster`,
    text: `${who} invited you to join the organization ${i.org.name} on Muster as ${i.role}.\n\nOpen this link to join (or to create your account with this email address):\n${ctx.config.publicUrl}/invites/${token}\n\nThe link works for 14 days. If you do not know ${inviter?.name ?? 'the sender'}, ignore this email.`,
  });
}

/** The pending, unexpired invite of a link's token, or undefined. */
export async function findInvite(ctx: AppContext, token: string) {
  const invite = await invites.findPendingByToken(ctx.db, sha256(token));
  if (!invite || expiresAt(invite.created_at) <= iso(ctx.clock.now())) return undefined;
  return invite;
}

export async function describeInvite(ctx: AppContext, token: string) {
  const invite = await findInvite(ctx, token);
  if (!invite) throw notFound();
  return { org: { name: invite.org_name, slug: invite.org_slug }, email: invite.email, role: invite.role, expires_at: expiresAt(invite.created_at) };
}

/**
 * Accepts an invite through its link for the signed-in user of the invited address. Holding the
 * emailed token proves the address, so the account becomes verified and every other invite
 * waiting for it is accepted too. Another account: 403 (sign in as the invited address).
 */
export async function acceptInviteLink(ctx: AppContext, actor: Actor, token: string) {
  const invite = await findInvite(ctx, token);
  if (!invite) throw notFound();
  const user = await findUserById(ctx.db, actor.userId);
  if (!user) throw notFound();
  if (user.email !== invite.email) throw forbidden();
  await ctx.transaction((tx) => proveEmail(tx.db, user, iso(ctx.clock.now()), membershipBegan(ctx, user.id, tx), () => userRowChanged(ctx, user.id, tx)));
  return { org: { id: invite.org_id, name: invite.org_name, slug: invite.org_slug }, role: invite.role, email_verified: true };
}
