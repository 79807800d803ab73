// The Track view's map (issue #38), loaded only by that view: the track as a line, its stops as
// numbered badges, and the replay's marker at the slider's point.
import { baseMap, L } from './leaflet-base';
import type { Tiles } from './lazy-map';

export interface TrackMap {
  /** Draws a track (lat, lng pairs) and its stops, and fits it. */
  show(line: [number, number][], stops: { lat: number; lng: number; label: string }[]): void;
  /** Puts the replay's marker at `at` (with its label), keeping it in view. */
  moveTo(at: [number, number], label: string): void;
  destroy(): void;
}

export function createTrackMap(el: HTMLElement, tiles: Tiles): TrackMap {
  const map = baseMap(el, tiles);
  const layer = L.layerGroup().addTo(map);
  let marker: L.Marker | null = null;
  return {
    show(line, stops) {
      layer.clearLayers();
      marker = null;
      if (line.length === 0) return;
      // The map was hidden while there was no track: it measures itself again before fitting.
      map.invalidateSize();
      const path = L.polyline(line, { color: '#1d4ed8', weight: 4, opacity: 0.8, interactive: false, className: 'track-line' }).addTo(layer);
      L.circleMarker(line[0]!, { radius: 5, color: '#047857', weight: 3, fillColor: '#fff', fillOpacity: 1, interactive: false, className: 'track-start' }).addTo(layer);
      stops.forEach((s, i) => {
        const m = L.marker([s.lat, s.lng], {
          icon: L.divIcon({ className: 'track-stop', html: `<span>${i + 1}</span>`, iconSize: [24, 24], iconAnchor: [12, 12], tooltipAnchor: [0, -13] }),
          keyboard: false,
        })
          .bindTooltip(s.label.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`), { direction: 'top' })
          .addTo(layer);
        const node = m.getElement();
        node?.setAttribute('role', 'img');
        node?.setAttribute('aria-label', s.label);
        node?.setAttribute('data-stop', String(i + 1));
      });
      map.fitBounds(path.getBounds(), { padding: [30, 30], maxZoom: 17, animate: false });
    },
    moveTo(at, label) {
      if (!marker) {
        marker = L.marker(at, {
          icon: L.divIcon({ className: 'track-marker', html: '<span></span>', iconSize: [22, 22], iconAnchor: [11, 11] }),
          keyboard: false,
          zIndexOffset: 1000,
        }).addTo(layer);
        marker.getElement()?.setAttribute('data-testid', 'track-marker');
        marker.getElement()?.setAttribute('role', 'img');
      }
      marker.setLatLng(at);
      marker.getElement()?.setAttribute('aria-label', label);
      if (!map.getBounds().pad(-0.05).contains(at)) map.panTo(at, { animate: false });
    },
    destroy() {
      map.remove();
    },
  };
}
