// The booking page inside another site's iframe (/embed.js): compact layout, its height sent to the
// embedding page, and `muster:booked` posted to the embedding page's origin after a booking.

const params = new URLSearchParams(location.search);
export const embedded = window.parent !== window;
export const embedMode = embedded || params.get('embed') === '1';

/** The origin of a valid http(s) origin string, else undefined. */
function originOf(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const u = new URL(value);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === value.replace(/\/$/, '') ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where messages to the embedding page go: the browser's own record of the parent's origin when it
 * has one (location.ancestorOrigins, cannot be spoofed), else the `parent_origin` the embed script
 * passed; "*" only when neither is known. A wrong parent_origin only means the browser drops the message.
 */
export function parentOrigin(): string {
  const ancestors = (location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins;
  return originOf(ancestors && ancestors.length > 0 ? ancestors[0] : undefined) ?? originOf(params.get('parent_origin')) ?? '*';
}

export function postToParent(message: { type: string; [k: string]: unknown }): void {
  if (!embedded) return;
  window.parent.postMessage(message, parentOrigin());
}

/** Keeps the iframe as tall as the page (embed.js sets its height from `muster:resize`). */
export function reportHeight(): void {
  if (!embedded) return;
  let last = 0;
  const send = () => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height !== last) {
      last = height;
      postToParent({ type: 'muster:resize', height });
    }
  };
  new ResizeObserver(send).observe(document.documentElement);
  send();
}
