import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { sha256 } from '../../lib/crypto.js';
import { findActiveKey } from '../api-keys/api-keys.repository.js';
import { findSessionUser } from './sessions.repository.js';

export const SESSION_COOKIE = 'muster_session';

const KEY_PATTERN = /^sk_(live|test)_[A-Za-z0-9_-]{43}$/;

/** The API key of a request: `x-api-key`, else `Authorization: Bearer`. */
function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header) return header.trim();
  const auth = request.headers.authorization;
  if (auth?.toLowerCase().startsWith('bearer ')) return auth.slice(7).trim();
  return undefined;
}

/**
 * Resolves the credential of a request into an actor, or null. A presented key wins over a cookie;
 * a malformed, unknown or revoked key is not silently replaced by the cookie.
 */
export async function resolveActor(ctx: AppContext, request: FastifyRequest): Promise<Actor | null> {
  const key = presentedKey(request);
  if (key !== undefined) {
    if (!KEY_PATTERN.test(key)) return null;
    const row = await findActiveKey(ctx.db, sha256(key));
    return row ? { userId: row.user_id, mode: row.mode, via: 'key' } : null;
  }
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return null;
  const userId = await findSessionUser(ctx.db, sha256(token), iso(ctx.clock.now()));
  return userId === undefined ? null : { userId, mode: 'live', via: 'session' };
}
