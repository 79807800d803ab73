// How resolver output is answered: ISO text, names beside user ids.
import { iso } from '../../lib/clock.js';
import type { Interval, Shift } from './resolver.js';

/** What a deleted account is called in the history it leaves. */
export const DELETED_USER = 'Deleted user';

export const spanOut = (s: Interval) => ({ start: iso(new Date(s.start)), end: iso(new Date(s.end)) });

export function shiftOut(s: Shift, names: ReadonlyMap<number, string>) {
  return { user_id: s.userId, user_name: names.get(s.userId) ?? DELETED_USER, start: iso(new Date(s.start)), end: iso(new Date(s.end)), source: s.source };
}
