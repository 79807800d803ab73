import type { ThrottleDoor } from '../../lib/account-throttle.js';

/**
 * The per-account throttle as services see it: runs one try for an account through a door. Routes
 * build it from the reply (it sets Retry-After), so services stay free of HTTP.
 */
export type Guard = <T>(door: ThrottleDoor, email: string, run: () => Promise<T>) => Promise<T>;

/** No throttle: for callers that are not sign-in tries. */
export const unguarded: Guard = (_door, _email, run) => run();
