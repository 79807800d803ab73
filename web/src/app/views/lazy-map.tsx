// A Leaflet map that loads with its view: the Leaflet module (a chunk of its own, through `import()`,
// so no other view carries it) and the tile settings of GET /v1/web/config. Shared by the Sites and
// Track views; the Signals view keeps its own loader (signals.tsx).
import { useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../../lib/api';
import { ErrorAlert } from '../ui';

export interface Tiles {
  url: string;
  attribution: string;
}

/**
 * Makes the map once the element is there (`make` imports the map module and builds it) and
 * destroys it when the view goes away. `map` is null until it is ready.
 */
export function useLazyMap<M extends { destroy(): void }>(make: (el: HTMLElement, tiles: Tiles) => Promise<M>) {
  const el = useRef<HTMLDivElement>(null);
  const [map, setMap] = useState<M | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let made: M | null = null;
    let cancelled = false;
    get<{ map_tile_url: string; map_attribution: string }>('/v1/web/config')
      .then((cfg) => (cancelled || !el.current ? null : make(el.current, { url: cfg.map_tile_url, attribution: cfg.map_attribution })))
      .then((m) => {
        if (!m) return;
        if (cancelled) m.destroy();
        else {
          made = m;
          setMap(m);
        }
      })
      .catch((err: unknown) => setError(err));
    return () => {
      cancelled = true;
      made?.destroy();
    };
  }, []);
  return { el, map, error };
}

/** The map's element, with the loading error over it. */
export function MapBox({ el, error, label, testId }: { el: { current: HTMLDivElement | null }; error: unknown; label: string; testId: string }) {
  return (
    <div class="map-wrap">
      <div ref={el} class="map" data-testid={testId} role="region" aria-label={label} />
      {error ? (
        <div class="map-overlay">
          <ErrorAlert error={error} title="The map could not load." />
        </div>
      ) : null}
    </div>
  );
}
