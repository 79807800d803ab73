/** The one source of "now": services read it from the context so tests can set time. */
export interface Clock {
  now(): Date;
  /** now() as epoch milliseconds, without a Date: what the per-request paths (rate limits, credential cache) compare. */
  nowMs(): number;
}

export const systemClock: Clock = { now: () => new Date(), nowMs: Date.now };

/** A clock that only moves when told to: used by tests for expiry and SLA boundaries. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | string = '2026-01-05T12:00:00.000Z') {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  nowMs(): number {
    return this.current;
  }

  set(at: Date | string): void {
    this.current = new Date(at).getTime();
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/** The instants the stored form can hold in order: years 0000 to 9999 (a five-digit or signed year would sort wrong). */
const FIRST_STORABLE_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const LAST_STORABLE_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** Whether epoch milliseconds are a time Muster can store: finite, within JavaScript's dates and a four-digit year. */
export const storableTime = (ms: number): boolean => ms >= FIRST_STORABLE_MS && ms <= LAST_STORABLE_MS;

/** Timestamps are stored and returned as ISO-8601 UTC text with milliseconds: it sorts correctly in both dialects. */
let lastMs = NaN;
let lastIso = '';
export function iso(d: Date): string {
  const ms = d.getTime();
  // The text of the last millisecond asked for is kept: under load many calls fall in the same one.
  // (An invalid date is NaN, never equal: toISOString throws for it as before.)
  if (ms !== lastMs) {
    lastIso = d.toISOString();
    lastMs = ms;
  }
  return lastIso;
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
