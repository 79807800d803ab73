// /embed.js: puts a Muster booking page into any site.
//   <div data-muster-booking="/assign/alice/intro"></div>
//   <script src="https://muster.example.com/embed.js" async></script>
// or from script: window.Muster.embed(element, '/assign/alice/intro').
// The iframe grows with its page (`muster:resize` messages, accepted only from Muster's origin and
// from that very iframe). After a booking the page inside posts `{type: 'muster:booked', payload}`
// straight to this window (listen with addEventListener('message', ...)); the container element
// also gets a bubbling DOM event `muster:booked` whose `detail` is the payload.
(() => {
  interface MusterApi {
    embed(element: Element, path: string): HTMLIFrameElement;
    origin: string;
  }
  const w = window as Window & { Muster?: MusterApi };
  if (w.Muster) return;

  const script =
    (document.currentScript as HTMLScriptElement | null) ??
    Array.from(document.querySelectorAll<HTMLScriptElement>('script[src]')).find((s) => /\/embed\.js(\?|#|$)/.test(s.src)) ??
    null;
  const origin = new URL(script?.src ?? location.href, location.href).origin;
  const frames: { iframe: HTMLIFrameElement; container: Element }[] = [];

  function embed(element: Element, path: string): HTMLIFrameElement {
    const url = new URL(path, origin);
    if (url.origin !== origin) throw new Error(`Muster: ${path} is not a page of ${origin}`);
    url.searchParams.set('embed', '1');
    url.searchParams.set('parent_origin', location.origin);
    const iframe = document.createElement('iframe');
    iframe.src = url.href;
    iframe.title = element.getAttribute('data-muster-title') ?? 'Book a time';
    iframe.setAttribute('loading', 'lazy');
    iframe.style.cssText = 'display:block;width:100%;min-width:280px;height:640px;border:0;background:transparent;color-scheme:normal';
    element.setAttribute('data-muster-embedded', '');
    element.replaceChildren(iframe);
    frames.push({ iframe, container: element });
    return iframe;
  }

  window.addEventListener('message', (event: MessageEvent) => {
    if (event.origin !== origin || !event.source) return;
    const frame = frames.find((f) => f.iframe.contentWindow === event.source);
    const data = event.data as { type?: unknown; height?: unknown; payload?: unknown } | null;
    if (!frame || !data || typeof data !== 'object') return;
    if (data.type === 'muster:resize' && typeof data.height === 'number' && data.height > 0 && data.height < 20000) {
      frame.iframe.style.height = `${Math.ceil(data.height)}px`;
    } else if (data.type === 'muster:booked') {
      frame.container.dispatchEvent(new CustomEvent('muster:booked', { detail: data.payload, bubbles: true }));
    }
  });

  function scan(): void {
    document.querySelectorAll('[data-muster-booking]:not([data-muster-embedded])').forEach((el) => {
      const path = el.getAttribute('data-muster-booking');
      if (path) embed(el, path);
    });
  }

  w.Muster = { embed, origin };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', scan);
  else scan();
})();
