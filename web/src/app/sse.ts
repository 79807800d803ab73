// Live streams of a page: browsers allow 6 HTTP/1.1 connections per site across tabs, so every
// hook on one path shares one EventSource (the alert banner and the incident views share the
// incident stream), closed when its last user goes away. EventSource reconnects by itself and sends
// Last-Event-ID, so the server replays what was missed; when the browser gives up (an error
// answer), a new one is opened a few seconds later. When events may have been missed for good (the
// server's `resync`: the replay no longer covers Last-Event-ID; or a new EventSource, which
// resumes from nothing), the listeners get a `resync` event and read their data again.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { LiveEvent } from './types';

export type StreamState = 'connecting' | 'live' | 'reconnecting';

interface Shared {
  listeners: Set<(event: LiveEvent) => void>;
  states: Set<(state: StreamState) => void>;
  state: StreamState;
  close(): void;
}

const shared = new Map<string, Shared>();

/** Told to a stream's listeners when they may have missed events: read the data again. */
export const RESYNC: LiveEvent = { type: 'resync', payload: null };

function open(path: string): Shared {
  let source: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let opened = false;
  const s: Shared = {
    listeners: new Set(),
    states: new Set(),
    state: 'connecting',
    close: () => {
      stopped = true;
      clearTimeout(timer);
      source?.close();
    },
  };
  const setState = (state: StreamState) => {
    s.state = state;
    s.states.forEach((fn) => fn(state));
  };
  const connect = () => {
    // A stream opened again after the browser gave up starts from nothing: what happened in between is missed.
    const reopened = opened;
    opened = true;
    source = new EventSource(path, { withCredentials: true });
    source.onopen = () => setState('live');
    source.onerror = () => {
      setState('reconnecting');
      if (source?.readyState === EventSource.CLOSED && !stopped) timer = setTimeout(connect, 5000);
    };
    source.onmessage = (msg: MessageEvent<string>) => {
      let event: LiveEvent;
      try {
        event = JSON.parse(msg.data) as LiveEvent;
      } catch {
        return;
      }
      if (event.type === 'connected') {
        setState('live');
        if (reopened) s.listeners.forEach((fn) => fn(RESYNC));
      } else s.listeners.forEach((fn) => fn(event));
    };
  };
  connect();
  return s;
}

export function useStream(path: string | null, onEvent: (event: LiveEvent) => void): StreamState {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const [state, setState] = useState<StreamState>('connecting');
  useEffect(() => {
    if (!path) return;
    let s = shared.get(path);
    if (!s) shared.set(path, (s = open(path)));
    const listener = (e: LiveEvent) => handler.current(e);
    s.listeners.add(listener);
    s.states.add(setState);
    setState(s.state);
    return () => {
      s.listeners.delete(listener);
      s.states.delete(setState);
      if (s.listeners.size === 0) {
        s.close();
        shared.delete(path);
      }
    };
  }, [path]);
  return state;
}
