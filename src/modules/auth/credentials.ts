import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { sha256 } from '../../lib/crypto.js';
import { findActiveKey } from '../api-keys/index.js';
import { credentialCache } from '../users/index.js';
import { findLiveSession } from './sessions.repository.js';
import { sessionTokenOf } from './session-cookie.js';

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
 * The SHA-256 of the keys and session tokens presented lately, by their text: the hash is the
 * credential's id in the cache and the database, and computing it was a tenth of an authenticated
 * request's CPU (GET /v1/auth/me, issue #19). A pure function's memo: revocation is the grant's
 * business (the credential cache), a remembered hash gives no access by itself. Bounded: emptied
 * when full, so random keys cost memory of at most HASH_MEMO_MAX entries.
 */
const HASH_MEMO_MAX = 10_000;
const hashes = new Map<string, string>();
function hashOf(secret: string): string {
  let hash = hashes.get(secret);
  if (hash === undefined) {
    hash = sha256(secret);
    if (hashes.size >= HASH_MEMO_MAX) hashes.clear();
    hashes.set(secret, hash);
  }
  return hash;
}

/** An actor plus which credential it came from: live streams end when that credential does. */
export interface Credential extends Actor {
  keyId?: number;
  /** The stored id (hash) of the session. */
  sessionId?: string;
  /** When the session expires (epoch ms); a key does not. */
  expiresAt?: number;
}

/**
 * Resolves the credential of a request, or null. A presented key wins over a cookie; a
 * malformed, unknown or revoked key is not silently replaced by the cookie. Keys and sessions
 * come from the credential cache, which access notices keep true (credential-cache.ts).
 */
export async function resolveCredential(ctx: AppContext, request: FastifyRequest): Promise<Credential | null> {
  const key = presentedKey(request);
  if (key !== undefined) {
    if (!KEY_PATTERN.test(key)) return null;
    const hash = hashOf(key);
    const grant = await credentialCache(ctx).key(hash, async () => {
      const row = await findActiveKey(ctx.db, hash);
      return row && { userId: row.user_id, mode: row.mode, keyId: row.id };
    });
    return grant ? { userId: grant.userId, mode: grant.mode, via: 'key', keyId: grant.keyId } : null;
  }
  const token = sessionTokenOf(request);
  if (!token) return null;
  const sessionId = hashOf(token);
  const session = await credentialCache(ctx).session(sessionId, async () => {
    const row = await findLiveSession(ctx.db, sessionId, iso(ctx.clock.now()));
    return row && { userId: row.user_id, expiresAt: Date.parse(row.expires_at) };
  });
  return session ? { userId: session.userId, mode: sessionMode(request), via: 'session', sessionId, expiresAt: session.expiresAt } : null;
}

/**
 * A session is live, unless the dashboard's "View test data" switch asks for test mode with the
 * header `x-muster-mode: test` (as Stripe's dashboard does): the same person then reads and writes
 * the test-mode records of their orgs, which their own test keys could reach anyway. A custom
 * header cannot be sent cross-site without a CORS preflight, so a forged form cannot set it.
 */
function sessionMode(request: FastifyRequest): 'live' | 'test' {
  return request.headers['x-muster-mode'] === 'test' ? 'test' : 'live';
}

/**
 * The actor of a request when the credential cache holds its key or session: no promise, no
 * read (the auth hook's fast path). Null for a malformed key; undefined when it must be resolved
 * (resolveActor), including every unknown or refused credential.
 */
export function heldActor(ctx: AppContext, request: FastifyRequest): Actor | null | undefined {
  const key = presentedKey(request);
  if (key !== undefined) {
    if (!KEY_PATTERN.test(key)) return null;
    const grant = credentialCache(ctx).heldKey(hashOf(key));
    return grant && { userId: grant.userId, mode: grant.mode, via: 'key' };
  }
  const token = sessionTokenOf(request);
  if (!token) return null;
  const session = credentialCache(ctx).heldSession(hashOf(token));
  return session && { userId: session.userId, mode: sessionMode(request), via: 'session' };
}

/** The actor of a request's credential, or null. */
export async function resolveActor(ctx: AppContext, request: FastifyRequest): Promise<Actor | null> {
  const c = await resolveCredential(ctx, request);
  return c && { userId: c.userId, mode: c.mode, via: c.via };
}
