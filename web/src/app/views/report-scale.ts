// The Reports page's scales and numbers in words, kept apart from the components so the tests
// can check them without a browser: the charts' axis ticks, how many x labels fit, durations.

const trim = (n: number, digits: number) => String(Math.round(n * 10 ** digits) / 10 ** digits);

/** 45 s, 2.5 min, 40 min, 1.5 h, 2.3 d. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  if (seconds < 60) return `${trim(seconds, 0)} s`;
  if (seconds < 3600) return `${trim(seconds / 60, seconds < 600 ? 1 : 0)} min`;
  if (seconds < 86_400) return `${trim(seconds / 3600, seconds < 36_000 ? 1 : 0)} h`;
  return `${trim(seconds / 86_400, 1)} d`;
}

/** Counts step by whole numbers, percents by quarters, durations by round minutes and hours. */
export type AxisKind = 'count' | 'percent' | 'duration';

const MINUTE = 60;
const HOUR = 3600;
const DURATION_STEPS = [MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 48 * HOUR, 7 * 24 * HOUR];

/** Four or five round ticks from 0 covering `max`: counts by 1, 2, 5, 10...; percents 0-100 by 25; durations by round minutes or hours. */
export function ticks(axis: { max: number; kind: AxisKind }): number[] {
  if (axis.kind === 'percent') return [0, 25, 50, 75, 100];
  const max = Math.max(axis.max, axis.kind === 'count' ? 1 : MINUTE);
  let step: number;
  if (axis.kind === 'duration') {
    step = DURATION_STEPS.find((s) => max / s <= 4) ?? Math.ceil(max / 4 / (7 * 24 * HOUR)) * 7 * 24 * HOUR;
  } else {
    const raw = max / 4;
    const mag = 10 ** Math.floor(Math.log10(raw));
    step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
    step = Math.max(1, step);
  }
  const out: number[] = [];
  for (let v = 0; v < max + step; v += step) {
    out.push(v);
    if (v >= max) break;
  }
  return out;
}

/** Which x labels to print: every k-th so that labels of `labelWidth` px do not overlap in `plotWidth`. */
export function labelStride(count: number, plotWidth: number, labelWidth: number): number {
  if (count <= 1) return 1;
  return Math.max(1, Math.ceil((count * labelWidth) / Math.max(plotWidth, 1)));
}

