// The one live stream of a page: browsers allow 6 HTTP/1.1 connections per site across tabs, so
// each view opens at most one EventSource and closes it when it goes away. EventSource reconnects
// by itself and sends Last-Event-ID, so the server replays what was missed; when the browser gives
// up (an error answer), we open a new one a few seconds later.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { LiveEvent } from './types';

export type StreamState = 'connecting' | 'live' | 'reconnecting';

export function useStream(path: string | null, onEvent: (event: LiveEvent) => void): StreamState {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const [state, setState] = useState<StreamState>('connecting');
  useEffect(() => {
    if (!path) return;
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const open = () => {
      source = new EventSource(path, { withCredentials: true });
      source.onopen = () => setState('live');
      source.onerror = () => {
        setState('reconnecting');
        if (source?.readyState === EventSource.CLOSED && !stopped) timer = setTimeout(open, 5000);
      };
      source.onmessage = (msg: MessageEvent<string>) => {
        let event: LiveEvent;
        try {
          event = JSON.parse(msg.data) as LiveEvent;
        } catch {
          return;
        }
        if (event.type === 'connected') setState('live');
        else handler.current(event);
      };
    };
    open();
    return () => {
      stopped = true;
      clearTimeout(timer);
      source?.close();
    };
  }, [path]);
  return state;
}
