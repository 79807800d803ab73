// The plain Leaflet map of the Signals, Sites and Track views: tiles when the instance has a tile server
// (their errors only switch the background to a grid, as on the Signals map), no marker images.
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import type { Tiles } from './lazy-map';

export function baseMap(el: HTMLElement, tiles: Tiles): L.Map {
  const map = L.map(el, { center: [20, 0], zoom: 2, worldCopyJump: true, attributionControl: true });
  if (tiles.url) {
    const layer = L.tileLayer(tiles.url, { attribution: tiles.attribution, maxZoom: 19 });
    layer.on('tileerror', () => el.classList.add('tiles-failed'));
    layer.addTo(map);
  } else {
    el.classList.add('no-tiles');
  }
  return map;
}

/** A small round handle (a divIcon, no image) that the pointer drags; the form's fields are the keyboard's way. */
export function handle(at: L.LatLngExpression, className: string, label: string, draggable: boolean): L.Marker {
  const m = L.marker(at, {
    icon: L.divIcon({ className, html: '', iconSize: [18, 18], iconAnchor: [9, 9] }),
    draggable,
    keyboard: false,
    title: label,
    alt: label,
    autoPan: true,
  });
  return m;
}

export { L };
