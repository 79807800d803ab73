// The beacon map, loaded only by the Signals view (Leaflet stays out of every other view's bundle).
// Markers are HTML (divIcon) markers, no image files; tiles are optional and their errors are
// ignored, so the map still shows the markers on a plain background without a tile server.
//
// Issue 20, the dispatcher's map:
// - Auto-fit: the map fits every point when a device arrives or a device leaves the view, until
//   the dispatcher pans or zooms by hand; `fitAll()` (the "Fit all" button) brings it back.
// - Follow: `follow(key)` keeps one device centred as it moves, like Traccar's follow; a pan or
//   zoom by hand, or focusing another point, ends it.
// - A beacon is a round badge with the person's initials on their colour; an incident is a red
//   diamond with "!": two shapes, so neither is read for the other.
// - A device's trail (the positions seen since the page opened, given by the view) is a polyline
//   of segments fading with age.
// - A click on the empty map picks a point (`onPick`): the view offers "create incident here".
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { baseMap } from './leaflet-base';

export interface MapPoint {
  key: string;
  lat: number;
  lng: number;
  /** Tooltip text (also the marker's accessible name). */
  label: string;
  kind: 'beacon' | 'incident';
  /** Beacon: the initials (or short name) drawn inside. */
  initials?: string;
  /** Beacon: the person's colour (white text on it passes WCAG AA). */
  color?: string;
  /** Beacon: positions seen since the page opened, oldest first (the last one is the marker's). */
  trail?: readonly (readonly [number, number])[];
}

export interface MapView {
  /** Fits every point on changes (until the dispatcher moves the map by hand). */
  auto: boolean;
  /** The device kept centred, if any. */
  following: string | null;
}

export interface BeaconMap {
  update(points: MapPoint[]): void;
  /** Centres on a point and opens its tooltip; ends auto-fit, and Follow unless it is that point. */
  focus(key: string): void;
  /** Keeps `key` centred as it moves (null: stop). */
  follow(key: string | null): void;
  /** Fits every point and turns auto-fit back on. */
  fitAll(): void;
  /** The map's centre (the keyboard's "create incident at the map centre"). */
  center(): { lat: number; lng: number };
  /** Shows (or, with null, removes) the marker of a picked point. */
  showPick(at: { lat: number; lng: number } | null): void;
  destroy(): void;
}

export interface MapHandlers {
  /** A click on a marker. */
  onSelect?: (key: string) => void;
  /** A click on the empty map. */
  onPick?: (at: { lat: number; lng: number }) => void;
  /** Auto-fit or Follow changed. */
  onView?: (view: MapView) => void;
}

/** The marker's accessible name: it starts with the initials it shows (WCAG 2.5.3, label in name). */
const nameOf = (p: MapPoint) => (p.kind === 'beacon' && p.initials ? `${p.initials}: ${p.label}` : p.label);

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The fitted view keeps this much space around the points, and never zooms closer than a street. */
const FIT = { padding: [36, 36] as [number, number], maxZoom: 16 };

export function createMap(el: HTMLElement, tiles: { url: string; attribution: string }, handlers: MapHandlers = {}): BeaconMap {
  const map = baseMap(el, tiles);
  const markers = new Map<string, { marker: L.Marker; sig: string; kind: MapPoint['kind'] }>();
  const trails = new Map<string, { layer: L.LayerGroup; sig: string }>();
  let points: MapPoint[] = [];
  let auto = true;
  let following: string | null = null;
  let pick: L.Marker | null = null;
  // Moves made here, not by the dispatcher: with animate off, Leaflet fires their movestart and
  // zoomstart synchronously inside the call, so a counter around the call tells them apart.
  let byCode = 0;
  const moveByCode = (f: () => void) => {
    byCode += 1;
    try {
      f();
    } finally {
      byCode -= 1;
    }
  };
  const report = () => handlers.onView?.({ auto, following });
  const byHand = () => {
    if (byCode > 0 || (!auto && following === null)) return;
    auto = false;
    following = null;
    report();
  };
  map.on('movestart zoomstart', byHand);
  map.on('click', (e: L.LeafletMouseEvent) => handlers.onPick?.({ lat: e.latlng.lat, lng: e.latlng.lng }));

  const fit = () => {
    if (points.length === 0) return;
    moveByCode(() => {
      if (points.length === 1) map.setView([points[0]!.lat, points[0]!.lng], FIT.maxZoom, { animate: false });
      else map.fitBounds(L.latLngBounds(points.map((p) => [p.lat, p.lng] as [number, number])), { ...FIT, animate: false });
    });
  };
  const centreOn = (key: string, minZoom?: number) => {
    const m = markers.get(key);
    if (!m) return;
    moveByCode(() => map.setView(m.marker.getLatLng(), Math.max(map.getZoom(), minZoom ?? 0), { animate: false }));
  };

  const iconOf = (p: MapPoint): L.DivIcon =>
    p.kind === 'incident'
      ? L.divIcon({ className: 'marker-incident', html: '<span></span><b aria-hidden="true">!</b>', iconSize: [26, 26], iconAnchor: [13, 13], tooltipAnchor: [0, -15] })
      : L.divIcon({
          className: 'marker-beacon',
          html: `<span>${esc(p.initials ?? '?')}</span>`,
          iconSize: [32, 32],
          iconAnchor: [16, 16],
          tooltipAnchor: [0, -17],
        });

  const drawTrail = (p: MapPoint) => {
    const pts = p.trail ?? [];
    const sig = `${p.color}|${pts.map((x) => x.join(',')).join(';')}`;
    const old = trails.get(p.key);
    if (old?.sig === sig) return;
    old?.layer.remove();
    const layer = L.layerGroup();
    // One segment per step, older ones fainter.
    for (let i = 1; i < pts.length; i++) {
      const seg = L.polyline([pts[i - 1] as [number, number], pts[i] as [number, number]], {
        color: p.color ?? '#1d4ed8',
        weight: 4,
        opacity: 0.2 + (0.65 * i) / (pts.length - 1),
        interactive: false,
        className: 'trail',
      }).addTo(layer);
      seg.on('add', () => seg.getElement()?.setAttribute('data-trail', p.key));
    }
    layer.addTo(map);
    trails.set(p.key, { layer, sig });
  };

  return {
    update(next) {
      const seen = new Set<string>();
      let arrived = false;
      for (const p of next) {
        seen.add(p.key);
        if (p.kind === 'beacon') drawTrail(p);
        const sig = `${p.kind}|${p.initials}|${p.color}`;
        const existing = markers.get(p.key);
        if (existing && existing.sig === sig) {
          existing.marker.setLatLng([p.lat, p.lng]);
          existing.marker.setTooltipContent(esc(p.label));
          existing.marker.getElement()?.setAttribute('aria-label', nameOf(p));
          continue;
        }
        existing?.marker.remove();
        if (!existing && p.kind === 'beacon') arrived = true;
        const m = L.marker([p.lat, p.lng], { icon: iconOf(p), keyboard: true, title: '', alt: p.label, zIndexOffset: p.kind === 'incident' ? 500 : 0, riseOnHover: true })
          .bindTooltip(esc(p.label), { direction: 'top' })
          .on('click', () => handlers.onSelect?.(p.key))
          .addTo(map);
        const node = m.getElement();
        node?.setAttribute('data-key', p.key);
        node?.setAttribute('aria-label', nameOf(p));
        node?.setAttribute('role', 'button');
        if (p.kind === 'beacon' && p.color) {
          node?.setAttribute('data-color', p.color);
          // Through the CSSOM: the page's Content-Security-Policy refuses inline style attributes.
          const badge = node?.querySelector('span');
          if (badge) badge.style.backgroundColor = p.color;
        }
        markers.set(p.key, { marker: m, sig, kind: p.kind });
      }
      for (const [key, m] of markers) {
        if (!seen.has(key)) {
          m.marker.remove();
          markers.delete(key);
        }
      }
      for (const [key, t] of trails) {
        if (!seen.has(key)) {
          t.layer.remove();
          trails.delete(key);
        }
      }
      points = next;
      if (following !== null && !markers.has(following)) {
        following = null;
        report();
      }
      if (following !== null) {
        centreOn(following);
      } else if (auto && points.length > 0) {
        // A device arrived, or one is off screen (or nothing was fitted yet): fit them all.
        const view = map.getBounds();
        const off = points.some((p) => p.kind === 'beacon' && !view.contains([p.lat, p.lng]));
        if (arrived || off || map.getZoom() <= 2) fit();
      }
    },
    focus(key) {
      // A deliberate look at one point: auto-fit stops ("Fit all" brings it back), Follow of another ends.
      if (following !== key) following = null;
      auto = false;
      report();
      centreOn(key, 14);
      markers.get(key)?.marker.openTooltip();
    },
    follow(key) {
      following = key !== null && markers.has(key) ? key : null;
      if (following !== null) centreOn(following, 14);
      report();
    },
    fitAll() {
      auto = true;
      following = null;
      fit();
      report();
    },
    center() {
      const c = map.getCenter();
      return { lat: c.lat, lng: c.lng };
    },
    showPick(at) {
      pick?.remove();
      pick = null;
      if (!at) return;
      pick = L.marker([at.lat, at.lng], {
        icon: L.divIcon({ className: 'marker-pick', html: '', iconSize: [18, 18], iconAnchor: [9, 9] }),
        keyboard: false,
        interactive: false,
      }).addTo(map);
    },
    destroy() {
      map.remove();
    },
  };
}
