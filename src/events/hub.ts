import type { Mode } from '../db/schema.js';
import type { EventBus, LiveEvent } from './bus.js';

/** Where a stream writes: a socket-like sink (ServerResponse in production). */
export interface Sink {
  write(chunk: string): boolean;
  /** Bytes accepted by write() but not yet flushed to the client. */
  readonly writableLength: number;
  destroy(): void;
}

export interface Audience {
  channel: string;
  orgIds: ReadonlySet<number>;
  mode: Mode;
}

export interface HubOptions {
  heartbeatMs: number;
  /** Events younger than this are kept for Last-Event-ID replay. */
  replayMs: number;
  /** Hard cap on replay entries per channel, whatever their age. */
  replayMax: number;
  /** A subscriber whose unflushed bytes pass this is dropped (a client that stopped reading). */
  maxBufferedBytes: number;
}

interface Subscriber extends Audience {
  sink: Sink;
  /** Waiting for its replay from the shared store: live events reach it through that replay instead. */
  replaying?: boolean;
}

interface Frame {
  event: LiveEvent;
  text: string;
  at: number;
}

/** Frames of one channel, oldest first, from `start` on (a head index: trimming is O(1) amortised). */
interface ReplayBuffer {
  frames: Frame[];
  start: number;
}

export interface HubStats {
  subscribers: number;
  dropped: number;
  replayEntries: number;
  /** The most unflushed bytes any subscriber ever held when written to (memory bound check). */
  maxBufferedSeen: number;
}

/** One SSE frame: `id:` for resume, the JSON on one `data:` line. */
export function frame(id: number | undefined, data: unknown): string {
  return `${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/** The frame of an event, reusing its serialised data when it came that way from another instance. */
export function frameOf(event: LiveEvent): string {
  return event.data === undefined ? frame(event.id, { type: event.type, payload: event.payload }) : `id: ${event.id}\ndata: ${event.data}\n\n`;
}

/**
 * The SSE hub shared by every stream. Each event is serialised once, written to the subscribers
 * of its channel, org and mode, and kept for replay. A subscriber that does not drain is dropped
 * instead of buffering without bound. A heartbeat comment keeps proxies from closing idle streams.
 */
export class Hub {
  private readonly subscribers = new Set<Subscriber>();
  private readonly replay = new Map<string, ReplayBuffer>();
  private readonly unsubscribeBus: () => void;
  private readonly heartbeat: NodeJS.Timeout;
  private dropped = 0;
  private maxBufferedSeen = 0;

  constructor(
    private readonly bus: EventBus,
    private readonly options: HubOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribeBus = bus.subscribe((event) => this.dispatch(event));
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs);
    this.heartbeat.unref();
  }

  /**
   * Adds a stream: replays what it missed after `lastEventId` (within the replay window), then
   * sends it live events. Returns the function that removes it.
   */
  subscribe(audience: Audience, sink: Sink, lastEventId?: number): () => void {
    const subscriber: Subscriber = { ...audience, sink };
    if (lastEventId !== undefined && this.bus.replay) {
      subscriber.replaying = true;
      void this.replayShared(subscriber, lastEventId);
    } else if (lastEventId !== undefined) {
      for (const f of this.localSince(subscriber, lastEventId)) sink.write(f.text);
    }
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  stats(): HubStats {
    let replayEntries = 0;
    for (const b of this.replay.values()) replayEntries += b.frames.length - b.start;
    return { subscribers: this.subscribers.size, dropped: this.dropped, replayEntries, maxBufferedSeen: this.maxBufferedSeen };
  }

  /** Ends every open stream (at shutdown, so the server can finish closing); clients reconnect elsewhere. */
  disconnectAll(): void {
    for (const s of this.subscribers) s.sink.destroy();
    this.subscribers.clear();
  }

  close(): void {
    clearInterval(this.heartbeat);
    this.unsubscribeBus();
    this.disconnectAll();
  }

  /** Kept frames of the subscriber's audience after `lastEventId`, within the replay window, oldest first. */
  private localSince(s: Audience, lastEventId: number): Frame[] {
    const buffer = this.replay.get(s.channel);
    if (!buffer) return [];
    const oldest = this.now() - this.options.replayMs;
    const found: Frame[] = [];
    for (let i = this.firstAfter(buffer, lastEventId); i < buffer.frames.length; i++) {
      const f = buffer.frames[i]!;
      if (f.at >= oldest && this.reaches(s, f.event)) found.push(f);
    }
    return found;
  }

  /**
   * Replay from the store every instance shares (a client resuming on another instance than the
   * one it left), merged with this instance's buffer: that holds every event dispatched while the
   * shared read was under way (the subscriber skips live events until then) and what was delivered
   * only locally while Redis was away. Merged by id, so nothing is sent twice.
   */
  private async replayShared(s: Subscriber, lastEventId: number): Promise<void> {
    const shared = (await this.bus.replay!(s, lastEventId)) ?? [];
    if (!this.subscribers.has(s)) return; // gone while reading
    const texts = new Map<number, string>();
    for (const e of shared) if (this.reaches(s, e)) texts.set(e.id, frameOf(e));
    for (const f of this.localSince(s, lastEventId)) texts.set(f.event.id, f.text);
    for (const id of [...texts.keys()].sort((a, b) => a - b)) {
      if (!this.subscribers.has(s)) return; // dropped as a slow client
      this.send(s, texts.get(id)!);
    }
    s.replaying = false;
  }

  private reaches(s: Audience, e: LiveEvent): boolean {
    return s.channel === e.channel && s.mode === e.mode && s.orgIds.has(e.orgId);
  }

  private dispatch(event: LiveEvent): void {
    const text = frameOf(event);
    this.remember(event, text);
    for (const s of this.subscribers) {
      if (!s.replaying && this.reaches(s, event)) this.send(s, text);
    }
  }

  private send(s: Subscriber, text: string): void {
    const buffered = s.sink.writableLength;
    this.maxBufferedSeen = Math.max(this.maxBufferedSeen, buffered);
    if (buffered > this.options.maxBufferedBytes) {
      this.subscribers.delete(s);
      this.dropped += 1;
      s.sink.destroy();
      return;
    }
    s.sink.write(text);
  }

  /** Index of the first kept frame whose id is above `id` (ids only grow, so binary search). */
  private firstAfter(buffer: ReplayBuffer, id: number): number {
    let lo = buffer.start;
    let hi = buffer.frames.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (buffer.frames[mid]!.event.id <= id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private remember(event: LiveEvent, text: string): void {
    const at = this.now();
    let buffer = this.replay.get(event.channel);
    if (!buffer) this.replay.set(event.channel, (buffer = { frames: [], start: 0 }));
    const { frames } = buffer;
    frames.push({ event, text, at });
    const oldest = at - this.options.replayMs;
    while (buffer.start < frames.length && (frames[buffer.start]!.at < oldest || frames.length - buffer.start > this.options.replayMax)) {
      buffer.start++;
    }
    // Compact once the dead head outweighs the live part.
    if (buffer.start > 1024 && buffer.start * 2 > frames.length) {
      buffer.frames = frames.slice(buffer.start);
      buffer.start = 0;
    }
  }

  private beat(): void {
    for (const s of this.subscribers) this.send(s, ': heartbeat\n\n');
  }
}
