// "Share" for an event type: its booking link, the embed snippet for any site, and a live preview of
// the page as it appears embedded (the same page in an iframe, growing with its `muster:resize`).
import { useEffect, useRef } from 'preact/hooks';
import type { EventType } from '../types';
import { CopyButton } from '../ui';

/** The snippet README.md and docs/web.md describe: a container and /embed.js from this Muster. */
export const embedSnippet = (path: string, origin = location.origin) => `<div data-muster-booking="${path}"></div>\n<script src="${origin}/embed.js" async></script>`;

export function SharePanel({ type, preview = true }: { type: EventType; preview?: boolean }) {
  const path = new URL(type.booking_url, location.origin).pathname;
  const frame = useRef<HTMLIFrameElement>(null);
  useEffect(() => {
    // The embedded page reports its height; only this frame's messages from this origin count.
    const onMessage = (e: MessageEvent<{ type?: string; height?: number }>) => {
      if (e.origin !== location.origin || e.source !== frame.current?.contentWindow || e.data?.type !== 'muster:resize') return;
      if (frame.current && typeof e.data.height === 'number') frame.current.style.height = `${Math.min(Math.max(e.data.height, 320), 1400)}px`;
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, []);
  const snippet = embedSnippet(path);
  return (
    <section class="card stack share-panel" data-testid="share-panel" aria-label={`Share ${type.name}`}>
      <h2>Share</h2>
      {type.locked ? <div class="alert error">This event type is over your plan's limit: its page answers “not found” until you upgrade or delete others.</div> : null}
      <div class="field">
        <span class="label" id={`share-link-${type.id}`}>
          Booking link
        </span>
        <div class="link-box" aria-labelledby={`share-link-${type.id}`}>
          <a href={path} target="_blank" rel="noopener" class="mono" data-testid="share-link">
            {type.booking_url}
          </a>
          <CopyButton text={type.booking_url} label="Copy link" />
        </div>
      </div>
      <div class="field">
        <label for={`share-snippet-${type.id}`}>Embed on your site</label>
        <textarea id={`share-snippet-${type.id}`} class="mono snippet" readOnly rows={2} value={snippet} data-testid="share-snippet" />
        <div class="row">
          <CopyButton text={snippet} label="Copy snippet" />
          <small>Paste it where the booking page should appear; your page receives a `muster:booked` message after each booking.</small>
        </div>
      </div>
      {preview ? (
        <div class="field">
          <span class="label">Live preview</span>
          <iframe ref={frame} class="share-preview" data-testid="share-preview" title={`Preview of the booking page of ${type.name}`} src={`${path}?embed=1&parent_origin=${encodeURIComponent(location.origin)}`} loading="lazy" />
        </div>
      ) : null}
    </section>
  );
}
