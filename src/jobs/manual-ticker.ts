import type { Ticker } from './scheduler.js';

interface Timer {
  ms: number;
  next: number;
  fire: () => Promise<unknown> | undefined;
}

/**
 * A ticker for tests: time moves only through `advance`, which fires every timer due on the way
 * in time order, as `setInterval` would, and answers when the work of those ticks has settled.
 */
export class ManualTicker implements Ticker {
  private at: number;
  private readonly timers = new Set<Timer>();

  constructor(start = Date.parse('2026-01-05T12:00:00.000Z')) {
    this.at = start;
  }

  now(): number {
    return this.at;
  }

  every(ms: number, fire: Timer['fire']): () => void {
    const timer = { ms, next: this.at + ms, fire };
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  get active(): number {
    return this.timers.size;
  }

  advance(ms: number): Promise<unknown> {
    const end = this.at + ms;
    const work: Promise<unknown>[] = [];
    for (;;) {
      const due = [...this.timers].filter((t) => t.next <= end);
      if (due.length === 0) break;
      this.at = Math.min(...due.map((t) => t.next));
      for (const t of due.filter((d) => d.next === this.at)) {
        t.next += t.ms;
        const done = t.fire();
        if (done) work.push(done);
      }
    }
    this.at = end;
    return Promise.all(work);
  }
}
