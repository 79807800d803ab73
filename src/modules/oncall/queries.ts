// Questions about schedules, for the routes and for other modules (through index.ts): who is on
// call at an instant (with the bounds of their shift and who comes next), the final shifts of a
// range, and the timeline of each layer. Always answered from the whole history: an earlier
// instant gets the layers, overrides and members as they were then.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { DAY } from '../../lib/clock.js';
import { invalidField } from '../../lib/errors.js';
import { loadHistories } from './history.js';
import { resolve, type History, type Shift } from './resolver.js';
import type { ScheduleRow } from './schedules.repository.js';

/** The longest range one question may cover (API ranges, override lengths, how far a shift's bounds are looked for). */
export const MAX_RANGE = 93 * DAY;

/** `from`/`to` of a query: defaults `from` = now, `to` = from + `span`; 422 when reversed or over 93 days. */
export function rangeOf(q: { from?: string | undefined; to?: string | undefined }, now: number, span = 14 * DAY): { from: number; to: number } {
  const from = q.from === undefined ? now : Date.parse(q.from);
  const to = q.to === undefined ? from + span : Date.parse(q.to);
  if (!(to > from)) throw invalidField('to', 'must be after from');
  if (to - from > MAX_RANGE) throw invalidField('to', 'must be at most 93 days after from');
  return { from, to };
}

export interface Around {
  /** The final shift containing `at` (none in a gap). */
  current: Shift | undefined;
  /** The shift after it (or after the gap). */
  next: Shift | undefined;
}

// Windows tried in turn, (back, ahead) of the instant: most shifts are found in the first; a layer
// of one person with no restrictions has a shift with no end, bounded by the last.
const WINDOWS: [number, number][] = [
  [DAY, 2 * DAY],
  [8 * DAY, 16 * DAY],
  [MAX_RANGE, MAX_RANGE],
];

/** The current and next shift at `at`, each with its whole bounds (within 93 days either side). */
export function around(h: History, at: number): Around {
  for (const [back, ahead] of WINDOWS) {
    const last = back === MAX_RANGE;
    const from = at - back;
    const to = at + ahead;
    const { shifts } = resolve(h, from, to);
    const i = shifts.findIndex((s) => s.end > at);
    const current = i >= 0 && shifts[i]!.start <= at ? shifts[i] : undefined;
    const next = current ? shifts[i + 1] : i >= 0 ? shifts[i] : undefined;
    const whole = (s: Shift | undefined) => !s || (s.start > from && s.end < to);
    if (last || (whole(current) && next !== undefined && whole(next))) return { current, next };
  }
  return { current: undefined, next: undefined };
}

/** `around` for each schedule, its history loaded once for every window. */
export async function aroundMany(db: Kysely<DB>, schedules: readonly ScheduleRow[], at: number): Promise<Map<number, Around>> {
  const histories = await loadHistories(db, schedules, at - MAX_RANGE, at + MAX_RANGE);
  const out = new Map<number, Around>();
  for (const s of schedules) out.set(s.id, around(histories.get(s.id)!, at));
  return out;
}
