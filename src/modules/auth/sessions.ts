import type { FastifyReply } from 'fastify';
import type { AppContext } from '../../context.js';
import { iso } from '../../lib/clock.js';
import { randomToken, sha256 } from '../../lib/crypto.js';
import { SESSION_COOKIE } from './credentials.js';
import type { Tx } from '../../db/transaction.js';
import { deleteSession, deleteUserSessions, insertSession } from './sessions.repository.js';

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
  reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.config.secureCookies,
    maxAge: Math.floor(ctx.config.sessionTtlMs / 1000),
  });
}

/** Deletes the session named by the cookie, if any, and clears the cookie. */
export async function endSession(ctx: AppContext, reply: FastifyReply, token: string | undefined): Promise<void> {
  if (token) await deleteSession(ctx.db, sha256(token));
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: ctx.config.secureCookies });
}

/**
 * Ends every session of a user but the one the request came with (`keepToken`, its cookie), in
 * the caller's transaction: a password change or reset signs out every other browser. API keys stay.
 */
export async function endOtherSessions(tx: Tx, userId: number, keepToken?: string): Promise<void> {
  await deleteUserSessions(tx.db, userId, keepToken === undefined ? undefined : sha256(keepToken));
}
