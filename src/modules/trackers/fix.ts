import { storableTime } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';

/** One position as a tracker app reported it, already in Muster's units. */
export interface Fix {
  lat: number;
  lng: number;
  /** When the device took it; null: now. */
  at: Date | null;
  accuracy: number | null;
  /** `sos` from Traccar Client's SOS button; Muster turns it into an alert signal. */
  alarm: string | null;
  /** What goes into the beacon's meta besides device_id and protocol: speed (m/s), heading, altitude, battery (%)... */
  meta: Record<string, number | string | boolean>;
}

export type Params = Record<string, unknown>;

/** 400 in the tracker protocols' own terms: the apps show the status code, never a 422 body. */
export const badRequest = (field: string, message: string) =>
  new AppError(400, 'bad_request', 'Bad request', { details: [{ field, message }] });

/** The first non-empty text value of one parameter (a repeated query key arrives as an array). */
export function text1(params: Params, name: string): string | undefined {
  const v = params[name];
  if (!Array.isArray(v)) return textOf(v);
  for (const x of v) {
    const t = textOf(x);
    if (t !== undefined) return t;
  }
  return undefined;
}

function textOf(x: unknown): string | undefined {
  if (typeof x === 'string') {
    const t = x.trim();
    return t === '' ? undefined : t;
  }
  return typeof x === 'number' || typeof x === 'boolean' ? String(x) : undefined;
}

/** The first non-empty text value of the first of the parameters that has one (a repeated query key arrives as an array). */
export function text(params: Params, ...names: string[]): string | undefined {
  for (const name of names) {
    const t = text1(params, name);
    if (t !== undefined) return t;
  }
  return undefined;
}

/** A text as a number: undefined when absent or not a (finite) number. */
export function numOf(t: string | undefined): number | undefined {
  if (t === undefined) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/** A number, or undefined when absent, empty (GPSLogger sends empty placeholders) or not a number. */
export function num(params: Params, ...names: string[]): number | undefined {
  return numOf(text(params, ...names));
}

/** A coordinate that must be there and be a number: its absence is "no position" (400). */
export function coordinate(value: number | string | undefined, field: string): number {
  const n = typeof value === 'string' ? (value.trim() === '' ? NaN : Number(value)) : value;
  if (n === undefined || !Number.isFinite(n)) throw badRequest(field, 'a position needs a numeric latitude and longitude');
  return n;
}

/**
 * A timestamp as the apps send it (Traccar's OsmAnd decoder reads the same): epoch seconds,
 * epoch milliseconds (anything at or past 2^31 - 1), ISO 8601, or `yyyy-MM-dd HH:mm:ss` (UTC).
 */
export function timestamp(value: string | number | undefined, field = 'timestamp'): Date | null {
  if (value === undefined || value === '') return null;
  const s = String(value).trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(s)) {
    const n = Number(s);
    ms = n < 2_147_483_647 ? n * 1000 : n;
  } else if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(s)) {
    ms = Date.parse(`${s.replace(' ', 'T')}Z`);
  } else {
    ms = s.includes('T') ? Date.parse(s) : NaN;
  }
  if (!Number.isFinite(ms)) throw badRequest(field, 'must be epoch seconds or milliseconds, or an ISO 8601 time');
  // Beyond what a date (or the stored time text) can hold: a 400, never a 500 later (issue #31, F5).
  if (!storableTime(ms)) throw badRequest(field, 'is out of range (years 0000 to 9999)');
  return new Date(ms);
}

/** Copies the defined values into a meta object (no nulls or NaN in the beacon's meta). */
export function compact(values: Record<string, number | string | boolean | undefined | null>): Record<string, number | string | boolean> {
  const out: Record<string, number | string | boolean> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined || v === null || (typeof v === 'number' && !Number.isFinite(v))) continue;
    out[k] = v;
  }
  return out;
}

/** 1 knot in m/s: OsmAnd's `speed` is in knots, Muster's meta.speed in m/s. */
export const KNOT = 0.514444;
