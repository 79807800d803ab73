import type { Mode } from '../db/schema.js';
import { noticeCovers, type AccessNotice, type StreamHolder } from './access.js';
import { AccessRechecker, type AccessCheck } from './access-recheck.js';
import type { EventBus, LiveEvent } from './bus.js';

/** Where a stream writes: a socket-like sink (ServerResponse in production). */
export interface Sink {
  write(chunk: string): boolean;
  /**
   * Optional: hold writes until uncork(), then hand them to the kernel at once (ServerResponse has both).
   * The hub brackets each write of an event with them, so a stream's frame leaves in one syscall at
   * once, instead of each write corking its socket and queueing a tick of its own to uncork it.
   */
  cork?(): void;
  uncork?(): void;
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
  /**
   * Without a shared replay store: ids below this were given out before this hub existed, so a
   * client resuming from one may have missed events this hub never saw (it is told to resync).
   */
  resumeFloor?: number;
  /** The clock credentials expire by (the app's clock); the hub's own clock by default. */
  credentialClock?: () => number;
  /**
   * Every open stream's access is checked again (checkAccessWith) within this period, a slice of the
   * streams each second, so a notice lost in transit costs at most this long. Absent or 0: never.
   */
  recheckMs?: number;
  /** A check of access that failed (the database away): the streams stay as they are until the next. */
  onCheckError?: (err: unknown) => void;
}

/**
 * With a shared store, event ids come from Redis' clock (microseconds): a stream's position is set
 * this far behind this instance's clock when no newer event was seen, so a resume from it never
 * skips an event of a Redis clock a little behind ours (at worst it replays one from just before
 * the stream opened).
 */
const SHARED_CLOCK_MARGIN_US = 1_000_000;

/** Who holds a stream and until when its credential is valid (epoch ms; none for a key). */
export interface StreamAccess extends StreamHolder {
  expiresAt?: number | undefined;
}

/** Collects the access notices that arrive while a stream is being opened (see watchAccess). */
export interface AccessWatch {
  covers(holder: StreamHolder, orgIds: ReadonlySet<number>): boolean;
  stop(): void;
}

interface Subscriber extends Audience {
  sink: Sink;
  access?: StreamAccess | undefined;
  /** Waiting for its replay from the shared store: live events reach it through that replay instead. */
  replaying: boolean;
  /** Its slice of the periodic check of access (-1: none, a stream opened without access). */
  slot: number;
  /**
   * Non-zero while its access is being checked after a gap in the notices (recheckAll with hold):
   * it receives nothing until the check says it may; the events after `heldFrom` follow then.
   */
  holdGen: number;
  heldFrom: number;
}

interface Frame {
  event: LiveEvent;
  /** The serialised frame; made when first written (an event no stream receives is never serialised unless replayed). */
  text: string | undefined;
  at: number;
}

/** A frame's text, serialised once, on first use. */
const textOf = (f: Frame): string => (f.text ??= frameOf(f.event));

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
  /** Streams closed because the access that opened them ended (a notice or an expiry). */
  revoked: number;
}

/** The frame that tells a resuming client its Last-Event-ID is older than the replay keeps: refetch, then go on live. */
export const RESYNC = { type: 'resync' } as const;

/** The key of `routes`: the subscribers an event of this channel, mode and org reaches. */
const routeKey = (channel: string, mode: Mode, orgId: number) => `${channel} ${mode} ${orgId}`;

/** One SSE frame: `id:` for resume, the JSON on one `data:` line. */
export function frame(id: number | undefined, data: unknown): string {
  return `${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/** The frame of an event, reusing its serialised data when it came that way from another instance. */
export function frameOf(event: LiveEvent): string {
  return event.data === undefined ? frame(event.id, { type: event.type, payload: event.payload }) : `id: ${event.id}\ndata: ${event.data}\n\n`;
}

/**
 * The SSE hub shared by every stream. Each event is serialised once (when a stream first needs it), written to the subscribers
 * of its channel, org and mode, and kept for replay. A subscriber that does not drain is dropped
 * instead of buffering without bound. A heartbeat comment keeps proxies from closing idle streams.
 */
export class Hub {
  private readonly subscribers = new Set<Subscriber>();
  /**
   * The subscribers an event of one channel, mode and org reaches, by routeKey: a dispatch walks only
   * them, with no per-subscriber audience check. A subscriber of several orgs is in several of these
   * sets, and an event has one org, so it still gets each event once.
   */
  private readonly routes = new Map<string, Set<Subscriber>>();
  private readonly replay = new Map<string, ReplayBuffer>();
  /** Per channel, the newest id dropped from the replay buffer: a client resuming below it missed something. */
  private readonly trimmedUpTo = new Map<string, number>();
  private readonly watchers = new Set<AccessNotice[]>();
  private readonly unsubscribeBus: () => void;
  private readonly unsubscribeAccess: () => void;
  private readonly unsubscribeResume: (() => void) | undefined;
  /** Checks open streams' access again: on a period, and after a gap in the notices (recheckAll). */
  private readonly rechecker: AccessRechecker<Subscriber>;
  private holdGen = 0;
  /** The newest event id dispatched here: a resync frame carries it, so the next resume starts there. */
  private lastId = 0;
  private revoked = 0;
  private readonly heartbeat: NodeJS.Timeout;
  private dropped = 0;
  private maxBufferedSeen = 0;

  constructor(
    private readonly bus: EventBus,
    private readonly options: HubOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribeBus = bus.subscribe((event) => this.dispatch(event));
    this.unsubscribeAccess = bus.subscribeAccess((notice) => this.endAccess(notice));
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs);
    this.heartbeat.unref();
    // Notices published while this instance was not hearing them are lost: check every stream again.
    this.unsubscribeResume = bus.onHearingResumed?.(() => void this.recheckAll(true));
    const hooks = {
      alive: (s: Subscriber) => this.subscribers.has(s),
      mark: (s: Subscriber) => s.holdGen,
      settle: (s: Subscriber, ok: boolean, gen: number) => {
        if (!ok) this.revoke(s);
        // A held stream is released by the check that held it last (a later gap holds it again).
        else if (gen !== 0 && s.holdGen === gen) this.release(s);
      },
    };
    this.rechecker = new AccessRechecker(hooks, options.recheckMs ?? 0, options.onCheckError);
  }

  /** How streams' access is checked again (modules/streams): periodically, and after a gap in the notices. */
  checkAccessWith(check: AccessCheck): void {
    this.rechecker.use(check);
  }

  /**
   * Checks the access of every open stream now and closes those whose access ended. With `hold`
   * (after a gap in the notices, when any stream may have missed the one that ends it), the streams
   * receive nothing until their own check passes; then what they were held from follows.
   */
  async recheckAll(hold = false): Promise<void> {
    const list: Subscriber[] = [];
    const gen = hold ? ++this.holdGen : 0;
    for (const s of this.subscribers) {
      if (!s.access) continue;
      if (hold) {
        if (s.holdGen === 0) s.heldFrom = this.lastId;
        s.holdGen = gen;
      }
      list.push(s);
    }
    await this.rechecker.checkAll(list);
  }

  /**
   * Adds a stream: replays what it missed after `lastEventId` (or, when that is older than the
   * replay keeps, sends a resync frame instead of a partial window), then sends it live events.
   * `access` names the credential that opened it, so a notice that ends that access closes it.
   * Returns the function that removes it.
   */
  subscribe(audience: Audience, sink: Sink, lastEventId?: number, access?: StreamAccess): () => void {
    const subscriber: Subscriber = { channel: audience.channel, orgIds: audience.orgIds, mode: audience.mode, sink, access, replaying: false, slot: -1, holdGen: 0, heldFrom: 0 };
    if (lastEventId !== undefined && this.bus.replay) {
      subscriber.replaying = true;
      void this.replayShared(subscriber, lastEventId, this.lastId);
    } else if (lastEventId !== undefined) {
      const kept = this.localSince(subscriber, lastEventId);
      if (kept.complete && !(lastEventId < (this.options.resumeFloor ?? 0))) for (const f of kept.frames) sink.write(textOf(f));
      else sink.write(this.resyncFrame());
    }
    this.add(subscriber);
    return () => this.remove(subscriber);
  }

  /**
   * Closes every stream the notice covers (the client reconnects and authenticates again), and
   * records it for streams being opened right now (watchAccess).
   */
  endAccess(notice: AccessNotice): void {
    for (const list of this.watchers) list.push(notice);
    for (const s of this.subscribers) {
      if (s.access && noticeCovers(notice, s.access, s.orgIds)) this.revoke(s);
    }
  }

  /**
   * Starts collecting notices for a stream about to open: its credential and audience are read
   * after this, so a notice that lands between those reads and subscribe() is not lost.
   */
  watchAccess(): AccessWatch {
    const seen: AccessNotice[] = [];
    this.watchers.add(seen);
    return {
      covers: (holder, orgIds) => seen.some((n) => noticeCovers(n, holder, orgIds)),
      stop: () => this.watchers.delete(seen),
    };
  }

  /**
   * Where a stream opening now starts: an id at or above every event dispatched here so far and
   * below every event yet to come, so a client resuming from it (the `connected` frame's `id:`)
   * gets exactly what was published after it opened, even when no event came before it dropped.
   */
  position(): number {
    const nowUs = this.now() * 1000;
    if (this.bus.replay) return Math.max(this.lastId, nowUs - SHARED_CLOCK_MARGIN_US);
    // Local ids are never below the clock in microseconds (createIdSource), nor below resumeFloor.
    return Math.max(this.lastId, nowUs - 1, this.options.resumeFloor ?? 0);
  }

  stats(): HubStats {
    let replayEntries = 0;
    for (const b of this.replay.values()) replayEntries += b.frames.length - b.start;
    return { subscribers: this.subscribers.size, dropped: this.dropped, replayEntries, maxBufferedSeen: this.maxBufferedSeen, revoked: this.revoked };
  }

  /** Open streams per channel (metrics, read at scrape time). */
  subscribersByChannel(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const s of this.subscribers) counts.set(s.channel, (counts.get(s.channel) ?? 0) + 1);
    return counts;
  }

  /** Ends every open stream (at shutdown, so the server can finish closing); clients reconnect elsewhere. */
  disconnectAll(): void {
    for (const s of this.subscribers) s.sink.destroy();
    this.subscribers.clear();
    this.routes.clear();
    this.rechecker.clear();
  }

  close(): void {
    clearInterval(this.heartbeat);
    this.rechecker.close();
    this.unsubscribeBus();
    this.unsubscribeAccess();
    this.unsubscribeResume?.();
    this.disconnectAll();
  }

  /**
   * Kept frames of the subscriber's audience after `lastEventId`, within the replay window, oldest
   * first; not `complete` when a frame after it has already left the window or the buffer.
   */
  private localSince(s: Audience, lastEventId: number): { frames: Frame[]; complete: boolean } {
    let complete = (this.trimmedUpTo.get(s.channel) ?? 0) <= lastEventId;
    const buffer = this.replay.get(s.channel);
    if (!buffer) return { frames: [], complete };
    const oldest = this.now() - this.options.replayMs;
    const frames: Frame[] = [];
    for (let i = this.firstAfter(buffer, lastEventId); i < buffer.frames.length; i++) {
      const f = buffer.frames[i]!;
      if (f.at < oldest) complete = false;
      else if (this.reaches(s, f.event)) frames.push(f);
    }
    return { frames, complete };
  }

  private resyncFrame(): string {
    return frame(this.lastId > 0 ? this.lastId : undefined, RESYNC);
  }

  private add(s: Subscriber): void {
    this.subscribers.add(s);
    this.rechecker.add(s);
    for (const orgId of s.orgIds) {
      const key = routeKey(s.channel, s.mode, orgId);
      let route = this.routes.get(key);
      if (!route) this.routes.set(key, (route = new Set()));
      route.add(s);
    }
  }

  /** Takes a subscriber off the hub; false when it was already off. */
  private remove(s: Subscriber): boolean {
    if (!this.subscribers.delete(s)) return false;
    this.rechecker.remove(s);
    for (const orgId of s.orgIds) {
      const key = routeKey(s.channel, s.mode, orgId);
      const route = this.routes.get(key);
      if (route?.delete(s) && route.size === 0) this.routes.delete(key);
    }
    return true;
  }

  private revoke(s: Subscriber): void {
    this.remove(s);
    this.revoked += 1;
    s.sink.destroy();
  }

  /**
   * Replay from the store every instance shares (a client resuming on another instance than the
   * one it left), merged with this instance's buffer: that holds every event dispatched while the
   * shared read was under way (the subscriber skips live events until then) and what was delivered
   * only locally while Redis was away. Merged by id, so nothing is sent twice.
   */
  private async replayShared(s: Subscriber, lastEventId: number, markId: number): Promise<void> {
    const shared = await this.bus.replay!(s, lastEventId);
    if (!this.subscribers.has(s)) return; // gone while reading
    const texts = new Map<number, string>();
    if (shared?.complete) {
      for (const e of shared.events) if (this.reaches(s, e)) texts.set(e.id, frameOf(e));
      for (const f of this.localSince(s, lastEventId).frames) texts.set(f.event.id, textOf(f));
    } else {
      // Too old for the shared store (or Redis is away): resync from the newest id seen when the
      // stream opened, then what was dispatched here since.
      this.send(s, frame(markId > 0 ? markId : undefined, RESYNC));
      for (const f of this.localSince(s, markId).frames) texts.set(f.event.id, textOf(f));
    }
    // Held for a check of access (recheckAll): only what came before the hold; the rest follows its release.
    const upTo = s.holdGen === 0 ? Infinity : s.heldFrom;
    for (const id of [...texts.keys()].sort((a, b) => a - b)) {
      if (id > upTo) break;
      if (!this.subscribers.has(s)) return; // dropped as a slow client
      this.send(s, texts.get(id)!);
    }
    s.replaying = false;
  }

  /** A held stream whose access held: it gets what was dispatched while it waited, then live events. */
  private release(s: Subscriber): void {
    s.holdGen = 0;
    if (s.replaying) return; // its replay, still under way, sends all of it
    const kept = this.localSince(s, s.heldFrom);
    if (!kept.complete) {
      this.send(s, this.resyncFrame());
      return;
    }
    for (const f of kept.frames) {
      if (!this.subscribers.has(s)) return;
      this.send(s, textOf(f));
    }
  }

  private reaches(s: Audience, e: LiveEvent): boolean {
    return s.channel === e.channel && s.mode === e.mode && s.orgIds.has(e.orgId);
  }

  private dispatch(event: LiveEvent): void {
    if (event.id > this.lastId) this.lastId = event.id;
    const kept = this.remember(event);
    const route = this.routes.get(routeKey(event.channel, event.mode, event.orgId));
    if (!route) return;
    let text: string | undefined;
    for (const s of route) {
      if (!s.replaying && s.holdGen === 0) this.send(s, (text ??= textOf(kept)));
    }
  }

  private send(s: Subscriber, text: string): void {
    const buffered = s.sink.writableLength;
    this.maxBufferedSeen = Math.max(this.maxBufferedSeen, buffered);
    if (buffered > this.options.maxBufferedBytes) {
      this.remove(s);
      this.dropped += 1;
      s.sink.destroy();
      return;
    }
    const { sink } = s;
    if (sink.cork && sink.uncork) {
      sink.cork();
      sink.write(text);
      sink.uncork();
    } else {
      sink.write(text);
    }
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

  /** Keeps the event's frame for replay (its text made on first use); returns it. */
  private remember(event: LiveEvent): Frame {
    const at = this.now();
    let buffer = this.replay.get(event.channel);
    if (!buffer) this.replay.set(event.channel, (buffer = { frames: [], start: 0 }));
    const { frames } = buffer;
    const kept: Frame = { event, text: undefined, at };
    frames.push(kept);
    const oldest = at - this.options.replayMs;
    while (buffer.start < frames.length && (frames[buffer.start]!.at < oldest || frames.length - buffer.start > this.options.replayMax)) {
      this.trimmedUpTo.set(event.channel, frames[buffer.start]!.event.id);
      buffer.start++;
    }
    // Compact once the dead head outweighs the live part.
    if (buffer.start > 1024 && buffer.start * 2 > frames.length) {
      buffer.frames = frames.slice(buffer.start);
      buffer.start = 0;
    }
    return kept;
  }

  /** Keeps idle streams open, and ends those whose credential expired (a session past its lifetime). */
  private beat(): void {
    const now = (this.options.credentialClock ?? this.now)();
    for (const s of this.subscribers) {
      if (s.access?.expiresAt !== undefined && s.access.expiresAt <= now) this.revoke(s);
      else this.send(s, ': heartbeat\n\n');
    }
  }
}
