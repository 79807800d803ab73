// Half-open [start, end) ranges of epoch ms: the set operations the resolver composes layers with.
// mergeIntervals sorts its input; the others take lists sorted by start ("disjoint": not overlapping)
// and run in one pass.

export interface Interval {
  start: number;
  end: number;
}

/** Sorted, disjoint, touching ranges joined. */
export function mergeIntervals(list: readonly Interval[]): Interval[] {
  const sorted = [...list].sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const iv of sorted) {
    const last = out[out.length - 1];
    if (last && iv.start <= last.end) {
      if (iv.end > last.end) last.end = iv.end;
    } else out.push({ start: iv.start, end: iv.end });
  }
  return out;
}

/** Pieces of `a` (sorted, may carry data) that lie inside `b` (sorted, disjoint). */
export function intersect<T extends Interval>(a: readonly T[], b: readonly Interval[]): T[] {
  const out: T[] = [];
  let j = 0;
  for (const x of a) {
    while (j < b.length && b[j]!.end <= x.start) j++;
    for (let k = j; k < b.length && b[k]!.start < x.end; k++) {
      const start = Math.max(x.start, b[k]!.start);
      const end = Math.min(x.end, b[k]!.end);
      if (end > start) out.push({ ...x, start, end });
    }
  }
  return out;
}

/** Pieces of `a` (sorted) outside `b` (sorted, disjoint). */
export function subtract<T extends Interval>(a: readonly T[], b: readonly Interval[]): T[] {
  const out: T[] = [];
  let j = 0;
  for (const x of a) {
    while (j < b.length && b[j]!.end <= x.start) j++;
    let cur = x.start;
    for (let k = j; k < b.length && b[k]!.start < x.end; k++) {
      if (b[k]!.start > cur) out.push({ ...x, start: cur, end: b[k]!.start });
      cur = Math.max(cur, b[k]!.end);
    }
    if (cur < x.end) out.push({ ...x, start: cur, end: x.end });
  }
  return out;
}
