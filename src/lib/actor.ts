import type { Mode } from '../db/schema.js';

/** Who is calling, resolved once per request from an API key or the session cookie. */
export interface Actor {
  userId: number;
  /** From the key's prefix; a session cookie is always live. */
  mode: Mode;
  via: 'key' | 'session';
}
