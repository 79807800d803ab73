import type { StreamHolder } from './access.js';

/** One open stream as a check of access sees it. */
export interface CheckedStream {
  access: StreamHolder;
  orgIds: ReadonlySet<number>;
}

/**
 * Whether each stream's access still holds: its credential (key not revoked, session not ended)
 * and its audience (still a member of each of its orgs). One call per batch of streams.
 */
export type AccessCheck = (streams: readonly CheckedStream[]) => Promise<readonly boolean[]>;

/** How often the periodic check takes its next slice of the streams. */
const TICK_MS = 1_000;
/** Streams per call of the AccessCheck (its queries take their ids in one IN list). */
const BATCH = 500;

/** A stream as the rechecker keeps it: its access (streams without one are not checked) and its slice. */
export interface Rechecked {
  access?: StreamHolder | undefined;
  orgIds: ReadonlySet<number>;
  /** Its slice of the periodic check (-1: none); set by the rechecker. */
  slot: number;
}

/** What the rechecker needs of the hub's streams. */
export interface RecheckHooks<S> {
  /** Still open (a stream may close while its batch is being checked). */
  alive(s: S): boolean;
  /** Taken before the check is asked, handed back to `settle` (the hub's hold generation). */
  mark(s: S): number;
  /** The verdict: `ok` false closes the stream; a failed check counts as ok. */
  settle(s: S, ok: boolean, mark: number): void;
}

/**
 * The slice a stream opened now joins, of `slices` checked one a second from index `tick` on (the
 * `seq`-th stream to open): one of the far half, so its first check comes between half a period
 * and a period after it opened (its credential was checked as it opened) and never in the first
 * seconds, while streams opening together are still spread over half the slices.
 */
export function slotFor(tick: number, slices: number, seq: number): number {
  const half = Math.ceil(slices / 2);
  return (tick + (slices - half) + (seq % half)) % slices;
}

/**
 * Checks open streams' access again (issue #31 F4), in batches, yielding the event loop between them:
 * every stream once per `periodMs`, spread out (streams are dealt into one slice per second of the
 * period as they open, see slotFor, and each second one slice is checked, unless the previous check
 * still runs),
 * and all of them on demand (`checkAll`, after a gap in the notices). A check that fails leaves the
 * streams as they are and is reported to `onError`; the next one tries again.
 */
export class AccessRechecker<S extends Rechecked> {
  private check: AccessCheck | undefined;
  private readonly slices: Set<S>[] = [];
  private next = 0;
  private tick = 0;
  private checking = false;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly hooks: RecheckHooks<S>,
    periodMs: number,
    private readonly onError?: (err: unknown) => void,
  ) {
    if (periodMs <= 0) return;
    const tickMs = Math.min(TICK_MS, periodMs);
    for (let i = Math.max(1, Math.round(periodMs / tickMs)); i > 0; i--) this.slices.push(new Set());
    this.timer = setInterval(() => this.checkSlice(), tickMs);
    this.timer.unref();
  }

  use(check: AccessCheck): void {
    this.check = check;
  }

  add(s: S): void {
    if (!s.access || this.slices.length === 0) return;
    s.slot = slotFor(this.tick, this.slices.length, this.next++);
    this.slices[s.slot]!.add(s);
  }

  remove(s: S): void {
    if (s.slot >= 0) this.slices[s.slot]!.delete(s);
  }

  clear(): void {
    for (const slice of this.slices) slice.clear();
  }

  close(): void {
    clearInterval(this.timer);
    this.clear();
  }

  /** Asks the AccessCheck about the streams, a batch at a time, and settles each. */
  async checkAll(list: S[]): Promise<void> {
    const check = this.check;
    for (let i = 0; i < list.length; i += BATCH) {
      // Other work between batches: on SQLite a batch's queries run without yielding the event loop.
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      const batch = list.slice(i, i + BATCH).filter((s) => s.access && this.hooks.alive(s));
      const marks = batch.map((s) => this.hooks.mark(s));
      let verdicts: readonly boolean[] | undefined;
      if (check && batch.length > 0) {
        try {
          verdicts = await check(batch.map((s) => ({ access: s.access!, orgIds: s.orgIds })));
        } catch (err) {
          this.onError?.(err);
        }
      }
      for (let j = 0; j < batch.length; j++) {
        const s = batch[j]!;
        if (this.hooks.alive(s)) this.hooks.settle(s, verdicts?.[j] !== false, marks[j]!);
      }
    }
  }

  /** The periodic check: the streams of the next slice, unless the previous check is still running. */
  private checkSlice(): void {
    if (this.checking || !this.check) return;
    const slice = this.slices[this.tick++ % this.slices.length]!;
    if (slice.size === 0) return;
    this.checking = true;
    void this.checkAll([...slice]).finally(() => (this.checking = false));
  }
}
