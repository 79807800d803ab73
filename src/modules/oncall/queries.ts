// Questions about schedules, for the routes and for other modules (through index.ts): who is on
// call at an instant (with the bounds of their shift and who comes next), the final shifts of a
// range, and the timeline of each layer. Always answered from the whole history: an earlier
// instant gets the layers, overrides and members as they were then.
import { DAY } from '../../lib/clock.js';
import { invalidField } from '../../lib/errors.js';
import type { AppContext } from '../../context.js';
import { loadHistories, membersOf } from './history.js';
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

/**
 * The current and next shift at `at`, each with its whole bounds (within 93 days either side), and
 * whether they are whole: false only when the widest window cut one of them (or found no next shift).
 */
function settle(h: History, at: number): { found: Around; whole: boolean } {
  for (const [back, ahead] of WINDOWS) {
    const last = back === MAX_RANGE;
    const from = at - back;
    const to = at + ahead;
    const { shifts } = resolve(h, from, to);
    const i = shifts.findIndex((s) => s.end > at);
    const current = i >= 0 && shifts[i]!.start <= at ? shifts[i] : undefined;
    const next = current ? shifts[i + 1] : i >= 0 ? shifts[i] : undefined;
    const isWhole = (s: Shift | undefined) => !s || (s.start > from && s.end < to);
    const whole = isWhole(current) && next !== undefined && isWhole(next);
    if (last || whole) return { found: { current, next }, whole };
  }
  return { found: { current: undefined, next: undefined }, whole: false };
}

/** The current and next shift at `at`, each with its whole bounds (within 93 days either side). */
export const around = (h: History, at: number): Around => settle(h, at).found;

/**
 * `around` for each schedule of `schedules` (rows read by the caller, with their version), through the
 * context's memo (around-memo.ts): the members of their orgs are read every time; the layers and
 * overrides only for the schedules whose answer is not held.
 */
export async function aroundMany(ctx: Pick<AppContext, 'db' | 'oncallMemo'>, schedules: readonly ScheduleRow[], at: number): Promise<Map<number, Around>> {
  const memo = ctx.oncallMemo;
  const members = await membersOf(ctx.db, [...new Set(schedules.map((s) => s.org_id))]);
  const keyOf = (s: ScheduleRow) => members.get(s.org_id)?.key ?? '';
  const out = new Map<number, Around>();
  const missed: ScheduleRow[] = [];
  for (const s of schedules) {
    const held = memo?.get(s, keyOf(s), at);
    if (held) out.set(s.id, held);
    else missed.push(s);
  }
  if (missed.length === 0) return out;
  const histories = await loadHistories(ctx.db, missed, at - MAX_RANGE, at + MAX_RANGE, members);
  for (const s of missed) {
    const { found, whole } = settle(histories.get(s.id)!, at);
    if (whole) memo?.keep(s, keyOf(s), at, found);
    out.set(s.id, found);
  }
  return out;
}
