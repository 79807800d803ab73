// The schedule resolver: layers + overrides + history, a time range -> the final shifts. Pure: no
// database, no clock; every instant is epoch ms and every range half-open [start, end).
//
// - Versions: each edit of the layers (or the zone) is a version in force from its `from` until
//   the next one's, so an answer about an earlier time uses the layers as they were then.
// - A layer's turn k starts at its k-th handoff (`start` plus k turns: elapsed hours, or calendar
//   days/weeks at the same local clock time) and belongs to users[k mod n]. Restrictions mask time
//   without stopping the rotation. A later layer wins wherever it has someone; where it has
//   nobody the earlier layers show through.
// - Overrides beat every layer; of overlapping overrides the newest wins.
// - A user counts only while a member of the org: their turns and overrides are empty outside it.
import { intersect, mergeIntervals, subtract, type Interval } from './intervals.js';
import { DAY, instantOf, localDay, parseClock, parseLocal, wallOf, weekdayOf } from './zone.js';

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
export type TurnUnit = 'hour' | 'day' | 'week';

export interface Restriction {
  /** The days a window starts on; all days when absent or empty. */
  days?: Weekday[] | undefined;
  start_time: string;
  /** At or before start_time: the window runs past midnight into the next day. */
  end_time: string;
}

export interface LayerSpec {
  id: string;
  name: string;
  /** The first handoff: `YYYY-MM-DDTHH:MM[:SS]` in the schedule's zone, or an ISO 8601 time with an offset. */
  start: string;
  turn: { unit: TurnUnit; length: number };
  users: number[];
  restrictions?: Restriction[] | undefined;
}

/** The layers in force from `from` (epoch ms) until the next version; `ended` marks a deleted schedule. */
export interface Version {
  from: number;
  timeZone: string;
  /** In order of precedence: the last one wins. */
  layers: LayerSpec[];
  ended?: boolean;
}

export interface OverrideSpec {
  id: number;
  userId: number;
  /** Already clipped to when it was in force (created, deleted). */
  start: number;
  end: number;
  /** Higher is newer; the newest of overlapping overrides wins. */
  order: number;
}

export type { Interval } from './intervals.js';

export interface History {
  versions: readonly Version[];
  overrides: readonly OverrideSpec[];
  /** When each user was a member of the org (sorted, disjoint); a user missing here never was. */
  membership: ReadonlyMap<number, readonly Interval[]>;
}

export type Source = { type: 'layer'; layer_id: string } | { type: 'override'; override_id: number };

export interface Shift {
  userId: number;
  start: number;
  end: number;
  source: Source;
}

export interface Resolution {
  /** The final schedule in time order, contiguous pieces of one user and source merged. */
  shifts: Shift[];
  /** Time the schedule existed with nobody on call. */
  gaps: Interval[];
}

const HOUR = 3_600_000;

/** A layer made ready for arithmetic in one zone. */
interface Compiled {
  spec: LayerSpec;
  zone: string;
  /** Instant of the first handoff. */
  startMs: number;
  /** Wall time of the first handoff (day and week turns keep its clock time). */
  anchorWall: number;
  /** Nominal turn length in ms (exact for hours, wall days for days and weeks). */
  turnMs: number;
  windows: { days: Set<number> | null; start: number; end: number }[] | null;
}

const OFFSET_TIME = /(?:Z|[+-]\d{2}:?\d{2})$/i;

/** The instant and wall time of a layer's first handoff in `zone`; undefined when `start` is neither form. */
export function layerStart(start: string, zone: string): { instant: number; wall: number } | undefined {
  if (OFFSET_TIME.test(start)) {
    const instant = Date.parse(start);
    if (!Number.isFinite(instant) || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(start)) return undefined;
    return { instant, wall: wallOf(zone, instant) };
  }
  const wall = parseLocal(start);
  return wall === undefined ? undefined : { instant: instantOf(zone, wall), wall };
}

// What was compiled of each layer object, for its zone: versions are immutable and their parsed
// layers shared (history.ts), so a layer is compiled once however often it is asked about.
const compiled = new WeakMap<LayerSpec, { zone: string; layer: Compiled | undefined }>();

function compile(spec: LayerSpec, zone: string): Compiled | undefined {
  const hit = compiled.get(spec);
  if (hit && hit.zone === zone) return hit.layer;
  const layer = compileLayer(spec, zone);
  compiled.set(spec, { zone, layer });
  return layer;
}

function compileLayer(spec: LayerSpec, zone: string): Compiled | undefined {
  const s = layerStart(spec.start, zone);
  if (!s || spec.users.length === 0) return undefined;
  const unit = spec.turn.unit === 'hour' ? HOUR : spec.turn.unit === 'day' ? DAY : 7 * DAY;
  const windows = spec.restrictions?.length
    ? spec.restrictions.map((r) => {
        const start = parseClock(r.start_time) ?? 0;
        const end = parseClock(r.end_time) ?? 0;
        return {
          days: r.days?.length ? new Set(r.days.map((d) => WEEKDAYS.indexOf(d))) : null,
          start,
          // Past midnight (or a whole day when equal): the window ends on the next day.
          end: end <= start ? end + DAY : end,
        };
      })
    : null;
  return { spec, zone, startMs: s.instant, anchorWall: s.wall, turnMs: unit * spec.turn.length, windows };
}

/** The instant of handoff k (k >= 0). */
function handoff(l: Compiled, k: number): number {
  if (k === 0) return l.startMs;
  if (l.spec.turn.unit === 'hour') return l.startMs + k * l.turnMs;
  return instantOf(l.zone, l.anchorWall + k * l.turnMs);
}

/** The turn in force at `t` (t >= the first handoff). */
function turnAt(l: Compiled, t: number): number {
  let k = Math.max(0, Math.floor((t - l.startMs) / l.turnMs));
  while (k > 0 && handoff(l, k) > t) k--;
  while (handoff(l, k + 1) <= t) k++;
  return k;
}

/** The restriction windows of a layer that overlap [from, to), sorted and merged. */
function windowsIn(l: Compiled, from: number, to: number): Interval[] {
  if (!l.windows) return [{ start: from, end: to }];
  const out: Interval[] = [];
  // A window belongs to the day it starts on and may run into the next one. A day either side
  // more: where the clocks fall back across midnight, an instant's local date can be the day
  // before one whose windows have already begun.
  const last = localDay(l.zone, to) + DAY;
  for (let day = localDay(l.zone, from) - 2 * DAY; day <= last; day += DAY) {
    const wd = weekdayOf(day);
    for (const w of l.windows) {
      if (w.days && !w.days.has(wd)) continue;
      const start = instantOf(l.zone, day + w.start);
      const end = instantOf(l.zone, day + w.end);
      if (end > from && start < to && end > start) out.push({ start: Math.max(start, from), end: Math.min(end, to) });
    }
  }
  return mergeIntervals(out);
}

interface Piece extends Interval {
  userId: number;
}

/** Each user's pieces cut to their membership. */
function members<T extends Piece>(pieces: readonly T[], membership: History['membership']): T[] {
  const byUser = new Map<number, T[]>();
  for (const p of pieces) {
    let list = byUser.get(p.userId);
    if (!list) byUser.set(p.userId, (list = []));
    list.push(p);
  }
  const out: T[] = [];
  for (const [user, list] of byUser) out.push(...intersect(list, membership.get(user) ?? []));
  return out.sort((a, b) => a.start - b.start);
}

/** The turns of a layer over [from, to): who, masked by its restrictions (not yet by membership). */
function layerTurns(l: Compiled, from: number, to: number): Piece[] {
  const start = Math.max(from, l.startMs);
  if (start >= to) return [];
  const turns: Piece[] = [];
  let k = turnAt(l, start);
  let at = handoff(l, k);
  while (at < to) {
    const next = handoff(l, k + 1);
    if (next > at) turns.push({ userId: l.spec.users[k % l.spec.users.length]!, start: Math.max(at, start), end: Math.min(next, to) });
    k++;
    at = next;
  }
  return intersect(turns, windowsIn(l, start, to));
}

/** The versions' spans within [from, to). */
function spans(h: History, from: number, to: number): { v: Version; start: number; end: number }[] {
  const out: { v: Version; start: number; end: number }[] = [];
  h.versions.forEach((v, i) => {
    const start = Math.max(from, v.from);
    const end = Math.min(to, h.versions[i + 1]?.from ?? Infinity);
    if (end > start) out.push({ v, start, end });
  });
  return out;
}

/** Each layer's own shifts over [from, to) (restrictions and membership applied), by layer id. */
export function layerRows(h: History, from: number, to: number): Map<string, { name: string; shifts: Shift[] }> {
  const rows = new Map<string, { name: string; shifts: Shift[] }>();
  for (const { v, start, end } of spans(h, from, to)) {
    if (v.ended) continue;
    for (const spec of v.layers) {
      const l = compile(spec, v.timeZone);
      let row = rows.get(spec.id);
      if (!row) rows.set(spec.id, (row = { name: spec.name, shifts: [] }));
      row.name = spec.name;
      if (!l) continue;
      const source: Source = { type: 'layer', layer_id: spec.id };
      for (const p of members(layerTurns(l, start, end), h.membership)) row.shifts.push({ userId: p.userId, start: p.start, end: p.end, source });
    }
  }
  for (const row of rows.values()) row.shifts = mergeShifts(row.shifts);
  return rows;
}

const sameSource = (a: Source, b: Source) =>
  a.type === 'layer' ? b.type === 'layer' && a.layer_id === b.layer_id : b.type === 'override' && a.override_id === b.override_id;

/** In time order, with contiguous pieces of the same user and source joined. */
function mergeShifts(list: Shift[]): Shift[] {
  list.sort((a, b) => a.start - b.start);
  const out: Shift[] = [];
  for (const s of list) {
    const last = out[out.length - 1];
    if (last && last.end === s.start && last.userId === s.userId && sameSource(last.source, s.source)) last.end = s.end;
    else out.push({ userId: s.userId, start: s.start, end: s.end, source: s.source });
  }
  return out;
}

/** The final schedule over [from, to) and its gaps. */
export function resolve(h: History, from: number, to: number): Resolution {
  if (!(to > from)) return { shifts: [], gaps: [] };
  const live = spans(h, from, to).filter((s) => !s.v.ended);
  const exists = mergeIntervals(live.map((s) => ({ start: s.start, end: s.end })));
  const final: Shift[] = [];
  let covered: Interval[] = [];
  const take = (pieces: Piece[], source: Source) => {
    const free = subtract(pieces, covered);
    for (const p of free) final.push({ userId: p.userId, start: p.start, end: p.end, source });
    if (free.length) covered = mergeIntervals([...covered, ...free]);
  };

  // Overrides first, newest first: each takes what nothing newer took.
  const overrides = [...h.overrides].sort((a, b) => b.order - a.order);
  for (const o of overrides) {
    const window = [{ userId: o.userId, start: Math.max(o.start, from), end: Math.min(o.end, to) }].filter((p) => p.end > p.start);
    take(members(intersect(window, exists), h.membership), { type: 'override', override_id: o.id });
  }
  // Then each version's layers, the last (highest precedence) first.
  for (const { v, start, end } of live) {
    for (let i = v.layers.length - 1; i >= 0; i--) {
      const l = compile(v.layers[i]!, v.timeZone);
      if (l) take(members(layerTurns(l, start, end), h.membership), { type: 'layer', layer_id: l.spec.id });
    }
  }
  return { shifts: mergeShifts(final), gaps: subtract(exists, covered) };
}
