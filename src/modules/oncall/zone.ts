// Wall-clock arithmetic in one IANA zone, pure and exact across daylight saving.
//
// A "wall" time is a local date and clock time written as if it were UTC epoch ms (so calendar
// arithmetic on it needs no zone: one day is always 86,400,000 ms of wall time). The zone's offsets
// come from Luxon (the runtime's ICU data) once per zone and year: the year's transitions are
// found by sampling and bisection and kept, so converting afterwards is a binary search with no
// Intl call. A local time that does not exist (spring forward) maps to the first instant after the
// gap; an ambiguous one (fall back) to its first occurrence.
import { IANAZone } from 'luxon';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** One year of a zone: the offset at its start and every change within it (instant, new offset), in ms. */
interface YearTable {
  first: number;
  at: number[];
  offset: number[];
}

/**
 * A zone's year tables, and the last span of constant offset looked up: a resolution asks about
 * nearby instants of one zone thousands of times, and most answers come from that span alone.
 */
interface ZoneState {
  luxon: IANAZone;
  years: Map<number, YearTable>;
  from: number;
  to: number;
  offset: number;
}

const SAMPLE = 24 * HOUR;
const ZONE_LIMIT = 1_000;
const YEAR_LIMIT = 200;
const zones = new Map<string, ZoneState>();

function luxonOffset(zone: IANAZone, ts: number): number {
  return zone.offset(ts) * MINUTE;
}

/** The first instant in (lo, hi] whose offset differs from the offset at lo (one change assumed). */
function bisect(zone: IANAZone, lo: number, hi: number): number {
  const before = luxonOffset(zone, lo);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (luxonOffset(zone, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

function yearTable(z: ZoneState, year: number): YearTable {
  let t = z.years.get(year);
  if (t) return t;
  const start = Date.UTC(year, 0, 1);
  const end = Date.UTC(year + 1, 0, 1);
  t = { first: luxonOffset(z.luxon, start), at: [], offset: [] };
  let prev = t.first;
  // Zones change their offset at most a few times a year, never twice within a day (tzdata since 1970).
  for (let ts = start; ts < end; ts += SAMPLE) {
    const next = Math.min(ts + SAMPLE, end);
    const o = luxonOffset(z.luxon, next);
    if (o !== prev) {
      t.at.push(bisect(z.luxon, ts, next));
      t.offset.push(o);
      prev = o;
    }
  }
  if (z.years.size >= YEAR_LIMIT) z.years.clear();
  z.years.set(year, t);
  return t;
}

function zoneState(name: string): ZoneState {
  let z = zones.get(name);
  if (!z) {
    const luxon = IANAZone.create(name);
    if (!luxon.isValid) throw new RangeError(`unknown time zone: ${name}`);
    z = { luxon, years: new Map(), from: 0, to: 0, offset: 0 };
    if (zones.size >= ZONE_LIMIT) zones.clear();
    zones.set(name, z);
  }
  return z;
}

/** The zone's offset from UTC at instant `ts`, in ms (positive east of Greenwich). */
export function offsetAt(zone: string, ts: number): number {
  const z = zoneState(zone);
  if (ts >= z.from && ts < z.to) return z.offset;
  if (!Number.isFinite(ts)) return 0;
  const year = new Date(ts).getUTCFullYear();
  const t = yearTable(z, year);
  let lo = 0;
  let hi = t.at.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t.at[mid]! <= ts) lo = mid + 1;
    else hi = mid;
  }
  z.from = lo === 0 ? Date.UTC(year, 0, 1) : t.at[lo - 1]!;
  z.to = lo < t.at.length ? t.at[lo]! : Date.UTC(year + 1, 0, 1);
  z.offset = lo === 0 ? t.first : t.offset[lo - 1]!;
  return z.offset;
}

/** The wall time of instant `ts` in `zone`. */
export function wallOf(zone: string, ts: number): number {
  return ts + offsetAt(zone, ts);
}

/**
 * The instant of wall time `wall` in `zone`: its only occurrence; the first of two (fall back); or,
 * when the clocks skip it (spring forward), the instant the clocks jump, the first one after the gap.
 */
export function instantOf(zone: string, wall: number): number {
  // Offsets either side of the wall time; no zone changes its offset twice within two days.
  const before = offsetAt(zone, wall - DAY);
  const after = offsetAt(zone, wall + DAY);
  const early = wall - before;
  const late = wall - after;
  const earlyOk = offsetAt(zone, early) === before;
  const lateOk = offsetAt(zone, late) === after;
  if (earlyOk && lateOk) return Math.min(early, late);
  if (earlyOk) return early;
  if (lateOk) return late;
  // In the gap: the change lies between the two candidates.
  let lo = Math.min(early, late);
  let hi = Math.max(early, late);
  const first = offsetAt(zone, lo);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(zone, mid) === first) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The local calendar day (wall midnight) containing instant `ts`. */
export function localDay(zone: string, ts: number): number {
  const w = wallOf(zone, ts);
  return w - (((w % DAY) + DAY) % DAY);
}

/** 0 = Monday ... 6 = Sunday, of a wall day. */
export function weekdayOf(wallDay: number): number {
  return (new Date(wallDay).getUTCDay() + 6) % 7;
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** A local date-time `YYYY-MM-DDTHH:MM[:SS]` as wall ms, or undefined when it is not one (or not a real date). */
export function parseLocal(text: string): number | undefined {
  const m = LOCAL.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  if (h > 23 || mi > 59 || s > 59) return undefined;
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(wall);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return wall;
}

/** `HH:MM` as ms after midnight; undefined when malformed. */
export function parseClock(text: string): number | undefined {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return m ? Number(m[1]) * HOUR + Number(m[2]) * MINUTE : undefined;
}
