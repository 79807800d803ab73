// The incident page's small map (issue #38), loaded only there: the incident's position and its
// arrival radius, and where each person inside it arrived.
import { baseMap, L } from './leaflet-base';
import type { Tiles } from './lazy-map';

export interface IncidentMap {
  show(at: { lat: number; lng: number }, radius: number, label: string, arrivals: { lat: number; lng: number; label: string }[]): void;
  destroy(): void;
}

export function createIncidentMap(el: HTMLElement, tiles: Tiles): IncidentMap {
  const map = baseMap(el, tiles);
  const layer = L.layerGroup().addTo(map);
  let fitted = '';
  return {
    show(at, radius, label, arrivals) {
      layer.clearLayers();
      const circle = L.circle([at.lat, at.lng], { radius, color: '#b42318', weight: 2, dashArray: '6 5', fillOpacity: 0.08, interactive: false, className: 'arrival-radius' }).addTo(layer);
      const m = L.marker([at.lat, at.lng], {
        icon: L.divIcon({ className: 'marker-incident', html: '<span></span><b aria-hidden="true">!</b>', iconSize: [26, 26], iconAnchor: [13, 13] }),
        keyboard: false,
      }).addTo(layer);
      m.getElement()?.setAttribute('role', 'img');
      m.getElement()?.setAttribute('aria-label', label);
      for (const a of arrivals) {
        const dot = L.circleMarker([a.lat, a.lng], { radius: 6, color: '#fff', weight: 2, fillColor: '#047857', fillOpacity: 1, className: 'arrival-dot' }).bindTooltip(a.label.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`));
        dot.addTo(layer);
      }
      // Fitted to the radius when it or the position changes, not on every new arrival.
      const sig = `${at.lat},${at.lng},${radius}`;
      if (sig !== fitted) {
        fitted = sig;
        map.fitBounds(circle.getBounds(), { padding: [20, 20], maxZoom: 18, animate: false });
      }
    },
    destroy() {
      map.remove();
    },
  };
}
