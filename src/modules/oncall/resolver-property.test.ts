// The resolver against a brute force: random schedules (layers, restrictions, overrides, edits,
// members leaving) in random zones, compared instant by instant with an independent oracle that
// answers "who is on call at t" alone, from Intl (not Luxon) and by definition rather than
// arithmetic. Both answers are constant between consecutive boundaries of either (handoffs,
// window edges, overrides, edits, departures), so comparing at every such boundary compares them
// everywhere over the year; a second property walks minute by minute over shorter windows.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { resolve, WEEKDAYS, type History, type Interval, type LayerSpec, type OverrideSpec, type Restriction, type Shift, type Version } from './resolver.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const ZONES = [
  'UTC',
  'Europe/London',
  'America/New_York',
  'Australia/Sydney',
  'Australia/Lord_Howe', // half-hour daylight saving
  'America/St_Johns', // -03:30 / -02:30
  'Asia/Kathmandu', // +05:45, no daylight saving
  'Pacific/Chatham', // +12:45 / +13:45
  'America/Santiago',
  'Europe/Berlin',
  'Asia/Tokyo',
] as const;

// --- the oracle: Intl wall clock, "first instant whose wall time is at or after W" -----------------

const formatters = new Map<string, Intl.DateTimeFormat>();
function wall(zone: string, u: number): number {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(zone, f);
  }
  const p = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of f.formatToParts(u)) if (part.type in p) p[part.type as keyof typeof p] = Number(part.value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
}

/**
 * The handoff rule by definition: the first minute whose local wall time is at or after `w`.
 * Answers are remembered across runs (a zone's clock does not change between them).
 */
const memo = new Map<string, number>();
function firstAtOrAfter(zone: string, w: number): number {
  const key = `${zone}|${w}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  let u = w - 15 * HOUR;
  for (;;) {
    const d = w - wall(zone, u);
    if (d <= 0) break;
    const next = u + Math.max(d, MIN);
    if (wall(zone, next) > w) {
      // The clocks jumped over w between u and next (wall time only rises there): halve the
      // minutes between them down to the first one at or after w.
      let lo = u;
      let hi = next;
      while (hi - lo > MIN) {
        const mid = lo + Math.floor((hi - lo) / 2 / MIN) * MIN;
        if (wall(zone, mid) >= w) hi = mid;
        else lo = mid;
      }
      u = hi;
      break;
    }
    u = next;
  }
  memo.set(key, u);
  return u;
}

const parseWall = (local: string) => Date.parse(`${local}:00Z`);

interface OracleLayer {
  spec: LayerSpec;
  start: number;
  /** Handoff instants from turn 0, past the range. */
  handoffs: number[];
  /** Restriction windows, sorted by start; null: all time. */
  windows: Interval[] | null;
}

function oracleLayer(spec: LayerSpec, zone: string, to: number): OracleLayer {
  const offsetStart = /[+-]\d\d:\d\d$|Z$/.test(spec.start);
  const start = offsetStart ? Date.parse(spec.start) : firstAtOrAfter(zone, parseWall(spec.start));
  const anchor = offsetStart ? wall(zone, start) : parseWall(spec.start);
  const handoffs = [start];
  const unitMs = spec.turn.unit === 'hour' ? HOUR : spec.turn.unit === 'day' ? DAY : 7 * DAY;
  for (let k = 1; handoffs[handoffs.length - 1]! <= to; k++) {
    handoffs.push(spec.turn.unit === 'hour' ? start + k * unitMs * spec.turn.length : firstAtOrAfter(zone, anchor + k * unitMs * spec.turn.length));
  }
  let windows: Interval[] | null = null;
  if (spec.restrictions?.length) {
    windows = [];
    for (let day = Math.floor(start / DAY) * DAY - 3 * DAY; day <= to + 2 * DAY; day += DAY) {
      const wd = WEEKDAYS[(new Date(day).getUTCDay() + 6) % 7]!;
      for (const r of spec.restrictions) {
        if (r.days?.length && !r.days.includes(wd)) continue;
        const s = clock(r.start_time);
        const e = clock(r.end_time);
        const ws = firstAtOrAfter(zone, day + s);
        const we = firstAtOrAfter(zone, day + (e <= s ? DAY : 0) + e);
        if (we > ws) windows.push({ start: ws, end: we });
      }
    }
    windows.sort((a, b) => a.start - b.start);
  }
  return { spec, start, handoffs, windows };
}

const clock = (hhmm: string) => Number(hhmm.slice(0, 2)) * HOUR + Number(hhmm.slice(3)) * MIN;

/** The index of the last item of `sorted` (by `key`) at or before t; -1 when none. */
function lastAtOrBefore<T>(sorted: readonly T[], key: (x: T) => number, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(sorted[mid]!) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

function layerUserAt(l: OracleLayer, t: number): number | null {
  if (t < l.start) return null;
  // The last handoff at or before t (of two at one instant, the later turn: the earlier lasts no time).
  const k = lastAtOrBefore(l.handoffs, (x) => x, t);
  const user = l.spec.users[k % l.spec.users.length]!;
  if (l.windows) {
    // Windows last at most a day and a few hours: look back two days from the last one begun.
    let inside = false;
    for (let i = lastAtOrBefore(l.windows, (w) => w.start, t); i >= 0 && l.windows[i]!.start > t - 2 * DAY; i--) if (t < l.windows[i]!.end) inside = true;
    if (!inside) return null;
  }
  return user;
}

const memberAt = (h: History, user: number, t: number) => (h.membership.get(user) ?? []).some((i) => i.start <= t && t < i.end);

type Answer = { user: number; source: string } | 'gap' | 'none';

function oracleFor(h: History, to: number) {
  const layers = h.versions.map((v) => v.layers.map((l) => oracleLayer(l, v.timeZone, to)));
  return (t: number): Answer => {
    let vi = -1;
    for (let i = 0; i < h.versions.length; i++) if (h.versions[i]!.from <= t) vi = i;
    if (vi < 0 || h.versions[vi]!.ended) return 'none';
    const overrides = h.overrides.filter((o) => o.start <= t && t < o.end && memberAt(h, o.userId, t)).sort((a, b) => b.order - a.order);
    if (overrides[0]) return { user: overrides[0].userId, source: `o${overrides[0].id}` };
    const ls = layers[vi]!;
    for (let i = ls.length - 1; i >= 0; i--) {
      const user = layerUserAt(ls[i]!, t);
      if (user !== null && memberAt(h, user, t)) return { user, source: `l${ls[i]!.spec.id}` };
    }
    return 'gap';
  };
}

/** Every instant where the oracle's answer may change. */
function oracleBoundaries(h: History, to: number): number[] {
  const out: number[] = [];
  h.versions.forEach((v) => {
    out.push(v.from);
    for (const spec of v.layers) {
      const l = oracleLayer(spec, v.timeZone, to);
      out.push(...l.handoffs);
      for (const w of l.windows ?? []) out.push(w.start, w.end);
    }
  });
  for (const o of h.overrides) out.push(o.start, o.end);
  for (const list of h.membership.values()) for (const i of list) out.push(i.start, i.end);
  return out;
}

function resolverAt(shifts: Shift[], gaps: Interval[], t: number): Answer {
  const find = <T extends Interval>(list: T[]) => {
    let lo = 0;
    let hi = list.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.end <= t) lo = mid + 1;
      else if (list[mid]!.start > t) hi = mid - 1;
      else return list[mid];
    }
    return undefined;
  };
  const s = find(shifts);
  if (s) return { user: s.userId, source: s.source.type === 'layer' ? `l${s.source.layer_id}` : `o${s.source.override_id}` };
  return find(gaps) ? 'gap' : 'none';
}

function compareAt(h: History, from: number, to: number, points: Iterable<number>): void {
  const { shifts, gaps } = resolve(h, from, to);
  const oracle = oracleFor(h, to);
  for (const t of points) {
    if (t < from || t >= to) continue;
    const want = oracle(t);
    const got = resolverAt(shifts, gaps, t);
    if (JSON.stringify(want) !== JSON.stringify(got)) {
      assert.fail(`at ${new Date(t).toISOString()}: resolver ${JSON.stringify(got)}, brute force ${JSON.stringify(want)}\n${JSON.stringify(h, (_k, v: unknown) => (v instanceof Map ? [...v.entries()] : v))}`);
    }
  }
  // The answer's own shape: in order, no overlaps, nothing outside the range.
  const all = [...shifts, ...gaps].sort((a, b) => a.start - b.start);
  for (let i = 1; i < all.length; i++) assert.ok(all[i]!.start >= all[i - 1]!.end, 'shifts and gaps do not overlap');
  for (let i = 1; i < shifts.length; i++) {
    const [a, b] = [shifts[i - 1]!, shifts[i]!];
    assert.ok(!(a.end === b.start && a.userId === b.userId && JSON.stringify(a.source) === JSON.stringify(b.source)), 'contiguous pieces of one user and source are merged');
  }
}

// --- random schedules ------------------------------------------------------------------------------

const YEAR_FROM = Date.parse('2026-01-01T00:00:00Z');
const YEAR_TO = Date.parse('2027-01-01T00:00:00Z');
const pad = (n: number) => String(n).padStart(2, '0');
// Clock times near the usual changes (01:00-03:00) come up often, as do whole hours.
const hhmm = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom(0, 15, 30, 45)),
  fc.tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 30)),
  fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })),
).map(([h, m]) => `${pad(h)}:${pad(m)}`);
const localStart = fc.tuple(fc.integer({ min: Date.parse('2025-10-01T00:00:00Z') / DAY, max: Date.parse('2026-12-20T00:00:00Z') / DAY }), hhmm).map(([d, hm]) => `${new Date(d * DAY).toISOString().slice(0, 10)}T${hm}`);
const offsetStart = fc.tuple(localStart, fc.constantFrom('Z', '+01:00', '-05:00', '+10:30')).map(([l, o]) => `${l}:00${o}`);
const turn = fc.oneof(
  fc.record({ unit: fc.constant('hour' as const), length: fc.integer({ min: 1, max: 72 }) }),
  fc.record({ unit: fc.constant('day' as const), length: fc.integer({ min: 1, max: 10 }) }),
  fc.record({ unit: fc.constant('week' as const), length: fc.integer({ min: 1, max: 3 }) }),
);
const restriction: fc.Arbitrary<Restriction> = fc.record({
  days: fc.option(fc.subarray([...WEEKDAYS], { minLength: 0 }), { nil: undefined }),
  start_time: hhmm,
  end_time: hhmm,
});
const layerArb = (id: string): fc.Arbitrary<LayerSpec> =>
  fc.record({
    id: fc.constant(id),
    name: fc.constant(id),
    start: fc.oneof({ weight: 4, arbitrary: localStart }, { weight: 1, arbitrary: offsetStart }),
    turn,
    users: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
    restrictions: fc.option(fc.array(restriction, { minLength: 1, maxLength: 2 }), { nil: undefined }),
  });
const versionArb = (zone: string) =>
  fc.record({ zone: fc.oneof({ weight: 5, arbitrary: fc.constant(zone) }, { weight: 1, arbitrary: fc.constantFrom(...ZONES) }), n: fc.integer({ min: 1, max: 3 }), at: fc.integer({ min: YEAR_FROM, max: YEAR_TO }) }).chain(({ zone: z, n, at }) =>
    fc.tuple(...Array.from({ length: n }, (_, i) => layerArb(String.fromCharCode(97 + i)))).map((layers): Version => ({ from: Math.floor(at / MIN) * MIN, timeZone: z, layers })),
  );
const instant = (from: number, to: number) => fc.integer({ min: from / MIN, max: to / MIN }).map((m) => m * MIN);
const overrideArb = (from: number, to: number) =>
  fc.record({ start: instant(from, to), hours: fc.integer({ min: 1, max: 240 }), userId: fc.integer({ min: 1, max: 5 }) });
const membershipArb = (from: number, to: number) =>
  fc.array(fc.oneof(fc.constant(null), fc.tuple(instant(from - 30 * DAY, to), instant(from, to + 30 * DAY))), { minLength: 5, maxLength: 5 }).map(
    (spans) =>
      new Map(
        spans.map((s, i): [number, Interval[]] => {
          if (!s) return [i + 1, [{ start: -8.64e15, end: 8.64e15 }]];
          const [a, b] = s[0] < s[1] ? s : [s[1], s[0]];
          // Either a member from `a` until `b`, or one who left at `b` and came back later.
          return [i + 1, i % 2 ? [{ start: a, end: b }] : [{ start: -8.64e15, end: a }, { start: b, end: 8.64e15 }]];
        }),
      ),
  );

function historyArb(from: number, to: number, withEnd: boolean): fc.Arbitrary<History> {
  return fc.constantFrom(...ZONES).chain((zone) =>
    fc
      .record({
        first: versionArb(zone),
        edits: fc.array(versionArb(zone), { maxLength: 2 }),
        overrides: fc.array(overrideArb(from, to), { maxLength: 6 }),
        membership: membershipArb(from, to),
        ended: withEnd ? fc.option(instant(from, to), { nil: undefined }) : fc.constant(undefined),
      })
      .map(({ first, edits, overrides, membership, ended }): History => {
        const versions = [{ ...first, from: from - 60 * DAY }, ...edits].sort((a, b) => a.from - b.from);
        if (ended !== undefined) versions.push({ from: Math.max(ended, versions[versions.length - 1]!.from + MIN), timeZone: 'UTC', layers: [], ended: true });
        const os: OverrideSpec[] = overrides.map((o, i) => ({ id: i + 1, userId: o.userId, start: o.start, end: o.start + o.hours * HOUR, order: (i * 7) % overrides.length }));
        return { versions, overrides: os, membership };
      }),
  );
}

describe('resolver against a brute force', () => {
  test('a year of random schedules in random zones: equal at every boundary of either', () => {
    fc.assert(
      fc.property(historyArb(YEAR_FROM, YEAR_TO, true), (h) => {
        const { shifts, gaps } = resolve(h, YEAR_FROM, YEAR_TO);
        const points = new Set<number>([YEAR_FROM, ...oracleBoundaries(h, YEAR_TO)]);
        for (const s of [...shifts, ...gaps]) points.add(s.start).add(s.end);
        compareAt(h, YEAR_FROM, YEAR_TO, [...points].sort((a, b) => a - b));
      }),
      { numRuns: 25 },
    );
  });

  test('minute by minute over three days around a daylight-saving change', () => {
    // Each zone's changes of 2026 (found by the oracle's own clock) are where errors would hide.
    const changes: number[] = [];
    for (const zone of ZONES) {
      // Twelve-hour steps: a change lies within the step found, and the window below spans days.
    for (let u = YEAR_FROM; u < YEAR_TO; u += 12 * HOUR) if (wall(zone, u + 12 * HOUR) - wall(zone, u) !== 12 * HOUR) changes.push(u);
    }
    const around = fc.tuple(fc.constantFrom(...changes), fc.integer({ min: -36, max: 0 })).chain(([change, hours]) => {
      const from = change + hours * HOUR;
      const to = from + 3 * DAY;
      return historyArb(from, to, false).map((h) => ({ h, from, to }));
    });
    fc.assert(
      fc.property(around, ({ h, from, to }) => compareAt(h, from, to, Array.from({ length: (to - from) / MIN }, (_, i) => from + i * MIN))),
      { numRuns: 10 },
    );
  });
});
