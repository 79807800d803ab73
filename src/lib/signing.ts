import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Capability tokens for public links (`<id>.<mac>`): the MAC binds a purpose to a record id
 * under the instance secret, so a link can be rebuilt at any time and nothing per link is stored.
 */
export function signToken(secret: string, purpose: string, id: string): string {
  return `${id}.${mac(secret, purpose, id)}`;
}

/** The record id a token was made for, or undefined when it was not made by this instance for this purpose. */
export function verifyToken(secret: string, purpose: string, token: string): string | undefined {
  const dot = token.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const id = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1));
  const expected = Buffer.from(mac(secret, purpose, id));
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined;
}

function mac(secret: string, purpose: string, id: string): string {
  return createHmac('sha256', secret).update(`${purpose}:${id}`).digest('base64url');
}
