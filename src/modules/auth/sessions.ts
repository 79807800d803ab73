import type { FastifyReply } from 'fastify';
import type { AppContext } from '../../context.js';
import { iso } from '../../lib/clock.js';
import { randomToken, sha256 } from '../../lib/crypto.js';
import { clearSessionCookie, setSessionCookie } from './session-cookie.js';
import type { Tx } from '../../db/transaction.js';
import { deleteSession, deleteSessionsOfUser, insertSession } from './sessions.repository.js';

/** Opens a new session (a fresh 256-bit id at every login) and sets its cookie. Only the id's hash is stored. */
export async function startSession(ctx: AppContext, reply: FastifyReply, userId: number): Promise<void> {
  const token = randomToken(32);
  const now = ctx.clock.now();
  await insertSession(ctx.db, {
    id: sha256(token),
    userId,
    createdAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + ctx.config.sessionTtlMs)),
  });
  setSessionCookie(reply, token, { secure: ctx.config.secureCookies, maxAge: Math.floor(ctx.config.sessionTtlMs / 1000) });
}

/** Deletes the session named by the cookie, if any, closes the streams it opened, and clears the cookie. */
export async function endSession(ctx: AppContext, reply: FastifyReply, token: string | undefined): Promise<void> {
  if (token) {
    const sessionId = sha256(token);
    await deleteSession(ctx.db, sessionId);
    ctx.events.endAccess({ sessionId });
  }
  clearSessionCookie(reply, { secure: ctx.config.secureCookies });
}

/**
 * Ends every session of a user except the one whose cookie is `keepToken` (a password change
 * keeps the caller signed in) and closes the live streams those sessions opened, on every
 * instance. In a transaction, the streams close once it commits. Answers how many ended.
 */
export async function endUserSessions(ctx: AppContext, userId: number, options: { keepToken?: string | undefined; tx?: Tx } = {}): Promise<number> {
  const ended = await deleteSessionsOfUser(options.tx?.db ?? ctx.db, userId, options.keepToken === undefined ? undefined : sha256(options.keepToken));
  for (const sessionId of ended) ctx.events.endAccess({ sessionId }, options.tx);
  return ended.length;
}
