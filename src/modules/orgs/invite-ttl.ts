import { DAY } from '../../lib/clock.js';

/**
 * An invite works for two weeks, through its link or by the address being proven later; inviting
 * again starts it afresh with a new link. Its own module: the invite service and the proof of an
 * address (users) both need it, and neither may import the other.
 */
export const INVITE_TTL_MS = 14 * DAY;
