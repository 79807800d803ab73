// The field terminal's one incident stream: "My incidents" and the page card both follow it, and a
// page opens at most one EventSource (browsers allow six HTTP/1.1 connections per site across tabs).
// Opened by the first listener, closed when the last one goes. `open` is told to the listeners each
// time the stream (re)connects: events may have been missed, read the data again.

export interface StreamEvent {
  type: string;
  payload?: unknown;
}
type Listener = (e: StreamEvent) => void;

const listeners = new Set<Listener>();
let source: EventSource | null = null;

export function onIncidentEvent(fn: Listener): () => void {
  listeners.add(fn);
  if (!source) {
    source = new EventSource('/v1/incidents/stream', { withCredentials: true });
    source.onmessage = (msg: MessageEvent<string>) => {
      const e = JSON.parse(msg.data) as StreamEvent;
      for (const f of listeners) f(e);
    };
    source.onopen = () => {
      for (const f of listeners) f({ type: 'open' });
    };
  }
  return () => {
    listeners.delete(fn);
    if (listeners.size === 0) {
      source?.close();
      source = null;
    }
  };
}
