import type { Mode } from '../db/schema.js';

/** A live event for the members of one org in one mode. `id` orders events and resumes streams. */
export interface LiveEvent {
  id: number;
  /** Which stream carries it: `incidents` or `signals`. */
  channel: string;
  orgId: number;
  mode: Mode;
  type: string;
  payload: unknown;
}

export type Listener = (event: LiveEvent) => void;

/**
 * Fan-out between publishers and the SSE hubs. In-process by default; a Redis implementation of
 * the same interface lets an event published on one instance reach streams held on every other.
 */
export interface EventBus {
  publish(event: LiveEvent): void;
  subscribe(listener: Listener): () => void;
  close(): Promise<void>;
}

export function createLocalBus(): EventBus {
  const listeners = new Set<Listener>();
  return {
    publish: (event) => {
      for (const listener of listeners) listener(event);
    },
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => {
      listeners.clear();
      return Promise.resolve();
    },
  };
}

/**
 * Event ids: milliseconds since the epoch times 1000 plus a counter, so they grow across restarts
 * (a client resuming after a restart never skips new events) and stay below 2^53.
 */
export function createIdSource(now: () => number = Date.now): () => number {
  let last = 0;
  return () => {
    last = Math.max(last + 1, now() * 1000);
    return last;
  };
}
