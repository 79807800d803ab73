import type { Mode } from '../db/schema.js';
import { unauthorized } from './errors.js';

/** Who is calling, resolved once per request from an API key or the session cookie. */
export interface Actor {
  userId: number;
  /** From the key's prefix; a session cookie is always live. */
  mode: Mode;
  /** 'device': a tracker app's token, posting fixes on behalf of its owner (modules/trackers). */
  via: 'key' | 'session' | 'device';
}

/** The actor of an authenticated route (the auth hook, plugins/auth.ts, has already refused anonymous calls). */
export function actorOf(request: { actor: Actor | null }): Actor {
  if (!request.actor) throw unauthorized();
  return request.actor;
}
