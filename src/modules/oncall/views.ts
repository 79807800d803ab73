// How resolver output is answered: ISO text, names beside user ids.
import { iso } from '../../lib/clock.js';
import type { Interval, Shift } from './resolver.js';

/** What a deleted account is called in the history it leaves. */
export const DELETED_USER = 'Deleted user';

export const spanOut = (s: Interval) => ({ start: iso(new Date(s.start)), end: iso(new Date(s.end)) });

// The bounds of a shift as text, kept with the shift: the on-call memo (around-memo.ts) answers the
// same shift objects request after request, and formatting 800 instants was a tenth of the org view's CPU.
const spans = new WeakMap<Shift, { start: string; end: string }>();

export function shiftOut(s: Shift, names: ReadonlyMap<number, string>) {
  let span = spans.get(s);
  if (!span) spans.set(s, (span = spanOut(s)));
  return { user_id: s.userId, user_name: names.get(s.userId) ?? DELETED_USER, start: span.start, end: span.end, source: s.source };
}
