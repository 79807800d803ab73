import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'muster_session';

/**
 * The session cookie of a request, read from its Cookie header when asked (the `cookie` package's
 * parser). Muster has one cookie, so no per-request parsing hook: a request with an API key, and
 * every tracker fix, never parses a cookie (issue #19: @fastify/cookie's two hooks, a parse and a
 * Map per request, were a step of every request).
 */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  return parseCookie(header)[SESSION_COOKIE] || undefined;
}

export interface SessionCookieOptions {
  secure: boolean;
  /** Seconds; absent for clearing. */
  maxAge?: number;
}

/** Sets the session cookie: HttpOnly, SameSite=Lax, for the whole site. */
export function setSessionCookie(reply: FastifyReply, token: string, { secure, maxAge }: SessionCookieOptions): void {
  reply.header('set-cookie', stringifySetCookie({ name: SESSION_COOKIE, value: token, path: '/', httpOnly: true, sameSite: 'lax', secure, ...(maxAge === undefined ? {} : { maxAge }) }));
}

/** Clears the session cookie in the browser (empty, expired at once). */
export function clearSessionCookie(reply: FastifyReply, { secure }: SessionCookieOptions): void {
  reply.header('set-cookie', stringifySetCookie({ name: SESSION_COOKIE, value: '', path: '/', httpOnly: true, sameSite: 'lax', secure, maxAge: 0, expires: new Date(0) }));
}
