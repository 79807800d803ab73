import type { Mode } from '../db/schema.js';
import type { AccessNotice } from './access.js';

/** A live event for the members of one org in one mode. `id` orders events and resumes streams. */
export interface LiveEvent {
  id: number;
  /** Which stream carries it: `incidents` or `signals`. */
  channel: string;
  orgId: number;
  mode: Mode;
  type: string;
  /**
   * Handed over with the event: never changed after publish (the hub serialises it when a stream
   * first needs it, which for an event no stream was waiting for may be a replay minutes later).
   */
  payload: unknown;
  /**
   * The frame's data, `{type, payload}` as JSON, when it is already serialised (an event that came
   * from another instance): the hub writes it as it is instead of serialising the event again.
   */
  data?: string;
}

/** What a publisher hands the bus; the bus gives it its id unless it has one. */
export type NewEvent = Omit<LiveEvent, 'id'> & { id?: number };

export type Listener = (event: LiveEvent) => void;
export type AccessListener = (notice: AccessNotice) => void;

export interface SharedReplay {
  events: LiveEvent[];
  complete: boolean;
}

export interface ReplayScope {
  channel: string;
  orgIds: Iterable<number>;
  mode: Mode;
}

/**
 * Fan-out between publishers and the SSE hubs. In-process by default; the Redis implementation
 * (`redis-bus.ts`) lets an event published on one instance reach streams held on every other and
 * keeps the replay behind Last-Event-ID in Redis, shared by all instances.
 */
export interface EventBus {
  publish(event: NewEvent): void;
  subscribe(listener: Listener): () => void;
  /**
   * Events of a channel for some orgs in one mode after `afterId`, from a store shared by every
   * instance, oldest first; absent on the local bus, undefined when the store cannot be reached.
   * `complete` is false when `afterId` is older than the store keeps (some events may be gone).
   */
  replay?(where: ReplayScope, afterId: number): Promise<SharedReplay | undefined>;
  /**
   * Tells every instance (this one first, synchronously) that some access ended (access.ts), so
   * each hub closes the streams it covers.
   */
  publishAccess(notice: AccessNotice): void;
  subscribeAccess(listener: AccessListener): () => void;
  /**
   * Whether this instance hears the other instances' notices now: undefined while it may be
   * missing some (the Redis subscriber is down), else a number that changes each time hearing
   * resumes after a gap. Absent: one instance, nothing to miss. Caches of access (the credential
   * cache) serve nothing while it is undefined and drop what they hold when it changes.
   */
  accessEpoch?(): number | undefined;
  /**
   * Calls `listener` each time this instance hears the other instances' notices again after a gap
   * (the Redis subscriber subscribed anew): notices published during the gap never arrive, so
   * whatever was decided by them must be checked again (the hub checks every open stream). Absent:
   * one instance, no gaps.
   */
  onHearingResumed?(listener: () => void): () => void;
  close(): Promise<void>;
}

export function createLocalBus(nextId: () => number = createIdSource()): EventBus {
  const listeners = new Set<Listener>();
  const access = new Set<AccessListener>();
  return {
    publishAccess: (notice) => {
      for (const listener of access) listener(notice);
    },
    subscribeAccess: (listener) => {
      access.add(listener);
      return () => access.delete(listener);
    },
    publish: (event) => {
      // Written out, not `{...event, id}`: a spread followed by a new key costs a fresh hidden class per event.
      const e: LiveEvent = { id: event.id ?? nextId(), channel: event.channel, orgId: event.orgId, mode: event.mode, type: event.type, payload: event.payload };
      if (event.data !== undefined) e.data = event.data;
      for (const listener of listeners) listener(e);
    },
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => {
      listeners.clear();
      access.clear();
      return Promise.resolve();
    },
  };
}

/**
 * Event ids: milliseconds since the epoch times 1000 plus a counter, so they grow across restarts
 * (a client resuming after a restart never skips new events) and stay below 2^53. With Redis the
 * same shape comes from Redis' clock in microseconds, so ids of both sources stay comparable.
 */
export function createIdSource(now: () => number = Date.now): () => number {
  let last = 0;
  return () => {
    last = Math.max(last + 1, now() * 1000);
    return last;
  };
}
