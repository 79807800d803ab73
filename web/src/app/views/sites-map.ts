// The Sites view's map (issue #38), loaded only by that view: the org's sites as circles and
// polygons with their names, and the one being drawn or edited (the draft) with handles to drag.
// No drawing plugin: a click on the map is reported to the view, which decides what it means (the
// centre of a new circle, the next point of a polygon); the handles report where they were dropped.
import { baseMap, handle, L } from './leaflet-base';
import type { Tiles } from './lazy-map';

/** A site as the API answers it (the fields the map draws). */
export interface MapSite {
  id: number;
  name: string;
  kind: 'circle' | 'polygon';
  lat: number | null;
  lng: number | null;
  radius_m: number | null;
  area: { coordinates: number[][][] } | null;
}

export type LatLng = { lat: number; lng: number };

/** What is being drawn: a circle, or a polygon's points (lat, lng; the ring is closed on saving). */
export type Draft = { kind: 'circle'; lat: number; lng: number; radius: number } | { kind: 'polygon'; points: LatLng[]; closed: boolean };

export interface SitesMapHandlers {
  /** A click on the map (or on a site while drawing: a polygon may start inside another site). */
  onClick: (at: LatLng) => void;
  /** A click on a site while nothing is drawn. */
  onSelect: (id: number) => void;
  /** The circle's centre was dragged to `at`. */
  onMoveCentre: (at: LatLng) => void;
  /** The polygon's point `i` was dragged to `at`. */
  onMovePoint: (i: number, at: LatLng) => void;
  /** The polygon's first point was clicked with at least three points: it is closed. */
  onClose: () => void;
}

export interface SitesMap {
  /** Draws the sites; `editing` (the draft stands for it) is left out. */
  setSites(sites: MapSite[], editing: number | null): void;
  setDraft(draft: Draft | null): void;
  /** Whether a map click means "draw here" (else it selects a site). */
  setDrawing(on: boolean): void;
  /** Fits every site (and the draft); nothing to fit leaves the view. */
  fit(): void;
  /** Shows one site. */
  focus(id: number): void;
  /** Zooms in on a point placed from far out (a site is metres wide; a pixel of the world view is kilometres). */
  closeIn(at: LatLng): void;
  center(): LatLng;
  destroy(): void;
}

/** A polygon's ring without its closing position, as lat/lng. */
export const ringPoints = (area: { coordinates: number[][][] }): LatLng[] => {
  const ring = area.coordinates[0] ?? [];
  const open = ring.length > 1 && ring[0]![0] === ring[ring.length - 1]![0] && ring[0]![1] === ring[ring.length - 1]![1] ? ring.slice(0, -1) : ring;
  return open.map(([lng, lat]) => ({ lat: lat!, lng: lng! }));
};

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function createSitesMap(el: HTMLElement, tiles: Tiles, h: SitesMapHandlers): SitesMap {
  const map = baseMap(el, tiles);
  const sites = L.layerGroup().addTo(map);
  const draftLayer = L.layerGroup().addTo(map);
  const shapes = new Map<number, L.Circle | L.Polygon>();
  let drawing = false;
  let fitted = false;
  let draftSig = '';

  // Wrapped: past the antimeridian Leaflet's longitudes go on beyond 180.
  const at = (e: L.LeafletMouseEvent): LatLng => {
    const w = e.latlng.wrap();
    return { lat: w.lat, lng: w.lng };
  };
  map.on('click', (e: L.LeafletMouseEvent) => h.onClick(at(e)));

  const boundsOf = (withSites = true) => {
    const b = L.latLngBounds([]);
    if (withSites) for (const s of shapes.values()) b.extend(s.getBounds());
    draftLayer.eachLayer((l) => {
      if (l instanceof L.Circle || l instanceof L.Polyline) b.extend(l.getBounds());
    });
    return b;
  };

  return {
    setSites(list, editing) {
      sites.clearLayers();
      shapes.clear();
      for (const s of list) {
        if (s.id === editing) continue;
        const style = { color: '#1d4ed8', weight: 2, fillOpacity: 0.12, bubblingMouseEvents: false, className: 'site-shape' };
        const shape =
          s.kind === 'circle' && s.lat !== null && s.lng !== null && s.radius_m !== null
            ? L.circle([s.lat, s.lng], { ...style, radius: s.radius_m })
            : s.area
              ? L.polygon(ringPoints(s.area).map((p) => [p.lat, p.lng] as [number, number]), style)
              : null;
        if (!shape) continue;
        shape.bindTooltip(esc(s.name), { permanent: true, direction: 'center', className: 'site-label' });
        shape.on('click', (e: L.LeafletMouseEvent) => (drawing ? h.onClick(at(e)) : h.onSelect(s.id)));
        shape.on('add', () => {
          const path = shape.getElement();
          path?.setAttribute('data-site-id', String(s.id));
          path?.setAttribute('data-site-name', s.name);
        });
        shape.addTo(sites);
        shapes.set(s.id, shape);
      }
      // The first list with sites frames them; later changes leave the view where the person put it.
      if (!fitted && shapes.size > 0) {
        fitted = true;
        this.fit();
      }
    },
    setDraft(d) {
      const sig = JSON.stringify(d);
      if (sig === draftSig) return;
      draftSig = sig;
      draftLayer.clearLayers();
      if (!d) return;
      const style = { color: '#b42318', weight: 3, dashArray: '6 5', fillOpacity: 0.1, interactive: false, className: 'site-draft' };
      if (d.kind === 'circle') {
        const circle = L.circle([d.lat, d.lng], { ...style, radius: d.radius }).addTo(draftLayer);
        const centre = handle([d.lat, d.lng], 'site-handle site-centre', 'Centre: drag to move the site', true).addTo(draftLayer);
        centre.on('drag', () => circle.setLatLng(centre.getLatLng()));
        centre.on('dragend', () => {
          const at = centre.getLatLng();
          h.onMoveCentre({ lat: at.lat, lng: at.lng });
        });
        return;
      }
      const latlngs = d.points.map((p) => [p.lat, p.lng] as [number, number]);
      const outline = (d.closed ? L.polygon(latlngs, style) : L.polyline(latlngs, { ...style, fill: false })).addTo(draftLayer);
      d.points.forEach((p, i) => {
        const first = i === 0 && !d.closed && d.points.length >= 3;
        const m = handle([p.lat, p.lng], `site-handle site-point${first ? ' site-point-first' : ''}`, first ? 'First point: click to close the polygon' : `Point ${i + 1}: drag to move`, true).addTo(draftLayer);
        m.getElement()?.setAttribute('data-point', String(i));
        m.on('drag', () => {
          const next = [...latlngs];
          next[i] = [m.getLatLng().lat, m.getLatLng().lng];
          outline.setLatLngs(next);
        });
        m.on('dragend', () => h.onMovePoint(i, { lat: m.getLatLng().lat, lng: m.getLatLng().lng }));
        if (first) m.on('click', () => h.onClose());
      });
    },
    setDrawing(on) {
      drawing = on;
      el.classList.toggle('drawing', on);
    },
    fit() {
      const b = boundsOf();
      if (b.isValid()) map.fitBounds(b, { padding: [30, 30], maxZoom: 17, animate: false });
    },
    focus(id) {
      // The site being edited is drawn as the draft.
      const b = shapes.get(id)?.getBounds() ?? boundsOf(false);
      if (b.isValid()) map.fitBounds(b, { padding: [40, 40], maxZoom: 17, animate: false });
    },
    closeIn(at) {
      if (map.getZoom() < 14) map.setView([at.lat, at.lng], 16, { animate: false });
    },
    center() {
      const c = map.getCenter();
      return { lat: c.lat, lng: L.Util.wrapNum(c.lng, [-180, 180], true) };
    },
    destroy() {
      map.remove();
    },
  };
}
