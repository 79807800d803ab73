// The beacon map, loaded only by the Signals view (Leaflet stays out of every other view's bundle).
// Markers are circle markers (no image files); tiles are optional and their errors are ignored, so
// the map still shows the markers on a plain background without a tile server.
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';

export interface MapPoint {
  key: string;
  lat: number;
  lng: number;
  label: string;
  kind: 'beacon' | 'alert' | 'signal' | 'incident';
}

export interface BeaconMap {
  update(points: MapPoint[]): void;
  focus(key: string): void;
  destroy(): void;
}

const COLORS = { beacon: '#1d4ed8', alert: '#c62828', signal: '#15803d', incident: '#b42318' } as const;

/** `onSelect` hears clicks on markers (the dispatcher picks an incident on the map). */
export function createMap(el: HTMLElement, tiles: { url: string; attribution: string }, onSelect?: (key: string) => void): BeaconMap {
  const map = L.map(el, { center: [20, 0], zoom: 2, worldCopyJump: true, attributionControl: true });
  if (tiles.url) {
    const layer = L.tileLayer(tiles.url, { attribution: tiles.attribution, maxZoom: 19 });
    layer.on('tileerror', () => el.classList.add('tiles-failed'));
    layer.addTo(map);
  } else {
    el.classList.add('no-tiles');
  }
  const markers = new Map<string, L.CircleMarker>();
  let fitted = false;

  return {
    update(points) {
      const seen = new Set<string>();
      for (const p of points) {
        seen.add(p.key);
        const existing = markers.get(p.key);
        if (existing) {
          existing.setLatLng([p.lat, p.lng]);
          existing.setTooltipContent(p.label);
        } else {
          const m = L.circleMarker([p.lat, p.lng], {
            radius: p.kind === 'incident' ? 12 : p.kind === 'beacon' ? 9 : 7,
            color: p.kind === 'incident' ? '#fef3f2' : '#ffffff',
            weight: p.kind === 'incident' ? 4 : 2,
            fillColor: COLORS[p.kind],
            fillOpacity: 0.95,
            className: `marker-${p.kind}`,
          })
            .bindTooltip(p.label, { direction: 'top', offset: [0, -8] })
            .on('click', () => onSelect?.(p.key))
            .addTo(map);
          m.getElement()?.setAttribute('data-key', p.key);
          markers.set(p.key, m);
        }
      }
      for (const [key, m] of markers) {
        if (!seen.has(key)) {
          m.remove();
          markers.delete(key);
        }
      }
      if (!fitted && points.length > 0) {
        fitted = true;
        const bounds = L.latLngBounds(points.map((p) => [p.lat, p.lng] as [number, number]));
        map.fitBounds(bounds.pad(0.3), { maxZoom: 15 });
      }
    },
    focus(key) {
      const m = markers.get(key);
      if (!m) return;
      map.setView(m.getLatLng(), Math.max(map.getZoom(), 14));
      m.openTooltip();
    },
    destroy() {
      map.remove();
    },
  };
}
