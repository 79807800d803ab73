// Sites (issue #38, docs/dispatch.md "Sites"): an org's places drawn on a map, circles and polygons
// with their names. Admins and owners draw a new circle (a click places its centre) or polygon (a
// click per point, closed on its first point or with "Close polygon"), rename, resize, move (drag
// the centre or a point, or type the coordinates) and delete them. Everything the map does has a
// form field or a button beside it, so the page works from the keyboard alone; the API's 422s show
// beside their fields. Members see the sites read-only.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { del, get, patch, post } from '../../lib/api';
import { useSession } from '../session';
import type { Site } from '../types';
import { Empty, ErrorAlert, errorsOf, FieldError, Loading, PageHeader, useAsync } from '../ui';
import { MapBox, useLazyMap } from './lazy-map';
import type { Draft, LatLng, SitesMap, SitesMapHandlers } from './sites-map';

type Mode = { kind: 'none' } | { kind: 'circle' } | { kind: 'polygon' } | { kind: 'edit'; id: number };

interface Point {
  lat: string;
  lng: string;
}
interface Form {
  name: string;
  lat: string;
  lng: string;
  radius: string;
  points: Point[];
  closed: boolean;
}

const EMPTY: Form = { name: '', lat: '', lng: '', radius: '150', points: [], closed: false };
/** Six decimals: about 0.1 m. */
const fix = (n: number) => n.toFixed(6);
/** Numbers as typed: an empty or malformed one goes as it is and comes back as the API's 422 beside its field. */
const num = (v: string): number => (v.trim() === '' || !Number.isFinite(Number(v)) ? (v as unknown as number) : Number(v));
const finite = (v: string) => v.trim() !== '' && Number.isFinite(Number(v));

function formOf(s: Site): Form {
  if (s.kind === 'circle') return { ...EMPTY, name: s.name, lat: String(s.lat), lng: String(s.lng), radius: String(s.radius_m) };
  const ring = s.area?.coordinates[0] ?? [];
  return { ...EMPTY, name: s.name, points: ring.slice(0, -1).map(([lng, lat]) => ({ lat: String(lat), lng: String(lng) })), closed: true };
}

/** The shape the map draws for the form, when its numbers are numbers. */
function draftOf(kind: 'circle' | 'polygon' | null, f: Form): Draft | null {
  if (kind === 'circle') return finite(f.lat) && finite(f.lng) ? { kind: 'circle', lat: Number(f.lat), lng: Number(f.lng), radius: finite(f.radius) ? Math.max(1, Number(f.radius)) : 150 } : null;
  if (kind === 'polygon') {
    const points: LatLng[] = f.points.filter((p) => finite(p.lat) && finite(p.lng)).map((p) => ({ lat: Number(p.lat), lng: Number(p.lng) }));
    return points.length > 0 ? { kind: 'polygon', points, closed: f.closed } : null;
  }
  return null;
}

/** "circle, 150 m" or "polygon, 5 points". */
const shapeWords = (s: Site) => (s.kind === 'circle' ? `circle, ${Math.round(s.radius_m ?? 0)} m` : `polygon, ${Math.max(0, (s.area?.coordinates[0]?.length ?? 1) - 1)} points`);

/** The polygon's 422s (`area`, `area.coordinates`, `area.coordinates.0.3.1`): one message beside the points. */
function AreaError({ error }: { error: unknown }) {
  const fields = errorsOf(error)?.fields ?? {};
  const key = Object.keys(fields).find((k) => k === 'area' || k.startsWith('area.'));
  return key ? (
    <div class="field-error" id="err-area.coordinates" data-testid="area-error">
      {fields[key]}
    </div>
  ) : null;
}

export function SitesView() {
  const { orgs, orgId } = useSession();
  const [slug, setSlug] = useState(() => (orgs.find((o) => o.id === orgId) ?? orgs.find((o) => o.primary) ?? orgs[0])?.slug ?? '');
  const org = orgs.find((o) => o.slug === slug);
  const manage = !!org && (org.role === 'owner' || org.role === 'admin') && !org.locked;
  const base = `/v1/orgs/${encodeURIComponent(slug)}/sites`;
  const list = useAsync(() => (slug ? get<{ sites: Site[] }>(base).then((r) => r.sites) : Promise.resolve([] as Site[])), [slug]);
  const [mode, setMode] = useState<Mode>({ kind: 'none' });
  const [form, setForm] = useState<Form>(EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const editing = mode.kind === 'edit' ? list.data?.find((s) => s.id === mode.id) : undefined;
  const kind: 'circle' | 'polygon' | null = mode.kind === 'circle' || mode.kind === 'polygon' ? mode.kind : editing ? editing.kind : null;
  const drawing = mode.kind === 'circle' || (mode.kind === 'polygon' && !form.closed);

  // The map reports in map terms; what a click means depends on what is being drawn.
  const state = useRef({ mode, form, drawing });
  state.current = { mode, form, drawing };
  const handlers: SitesMapHandlers = {
    onClick: (at) => {
      const { mode: m, form: f } = state.current;
      if (m.kind === 'circle') {
        setForm({ ...f, lat: fix(at.lat), lng: fix(at.lng) });
        map?.closeIn(at);
      }
      else if (m.kind === 'polygon' && !f.closed) setForm({ ...f, points: [...f.points, { lat: fix(at.lat), lng: fix(at.lng) }] });
    },
    onSelect: (id) => {
      if (state.current.mode.kind === 'none' || state.current.mode.kind === 'edit') select(id);
    },
    onMoveCentre: (at) => setForm((f) => ({ ...f, lat: fix(at.lat), lng: fix(at.lng) })),
    onMovePoint: (i, at) => setForm((f) => ({ ...f, points: f.points.map((p, j) => (j === i ? { lat: fix(at.lat), lng: fix(at.lng) } : p)) })),
    onClose: () => setForm((f) => (f.points.length >= 3 ? { ...f, closed: true } : f)),
  };
  const h = useRef(handlers);
  h.current = handlers;
  const { el, map, error: mapError } = useLazyMap<SitesMap>((node, tiles) =>
    import('./sites-map').then((m) =>
      m.createSitesMap(node, tiles, {
        onClick: (at) => h.current.onClick(at),
        onSelect: (id) => h.current.onSelect(id),
        onMoveCentre: (at) => h.current.onMoveCentre(at),
        onMovePoint: (i, at) => h.current.onMovePoint(i, at),
        onClose: () => h.current.onClose(),
      }),
    ),
  );
  const draft = useMemo(() => draftOf(kind, form), [kind, form]);
  useEffect(() => map?.setSites(list.data ?? [], mode.kind === 'edit' ? mode.id : null), [map, list.data, mode]);
  useEffect(() => map?.setDraft(draft), [map, draft]);
  useEffect(() => map?.setDrawing(drawing), [map, drawing]);

  const start = (m: Mode, f: Form) => {
    setMode(m);
    setForm(f);
    setError(null);
    setNotice(null);
  };
  const select = (id: number) => {
    const s = list.data?.find((x) => x.id === id);
    if (!s) return;
    if (manage) start({ kind: 'edit', id }, formOf(s));
    map?.focus(id);
  };
  const cancel = () => start({ kind: 'none' }, EMPTY);
  const atCentre = () => map?.center() ?? null;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!kind) return;
    setBusy(true);
    setError(null);
    const shape =
      kind === 'circle'
        ? { lat: num(form.lat), lng: num(form.lng), radius_m: num(form.radius) }
        : { area: { type: 'Polygon', coordinates: [[...form.points, ...form.points.slice(0, 1)].map((p) => [num(p.lng), num(p.lat)])] } };
    try {
      const saved = mode.kind === 'edit' ? await patch<Site>(`${base}/${mode.id}`, { name: form.name, ...shape }) : await post<Site>(base, { name: form.name, ...shape });
      list.setData((l) => [...(l ?? []).filter((s) => s.id !== saved.id), saved]);
      start({ kind: 'none' }, EMPTY);
      setNotice(`Saved “${saved.name}” (${shapeWords(saved)}).`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!editing || !confirm(`Delete the site "${editing.name}"? Devices inside it are forgotten (no exit is recorded).`)) return;
    setBusy(true);
    setError(null);
    try {
      await del(`${base}/${editing.id}`);
      list.setData((l) => l?.filter((s) => s.id !== editing.id));
      start({ kind: 'none' }, EMPTY);
      setNotice(`Deleted “${editing.name}”.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (orgs.length === 0) return <Empty title="No organization">Sites belong to an organization. <a href="/app/orgs">Create one</a></Empty>;
  const setPoint = (i: number, p: Partial<Point>) => setForm({ ...form, points: form.points.map((x, j) => (j === i ? { ...x, ...p } : x)) });
  const title = mode.kind === 'circle' ? 'New circle site' : mode.kind === 'polygon' ? 'New polygon site' : editing ? `Edit “${editing.name}”` : null;

  return (
    <section class="view">
      <PageHeader title="Sites" sub="Places of an organization (a depot, a yard): devices entering and leaving them are recorded." />
      {orgs.length > 1 ? (
        <div class="field narrow">
          <label for="sites-org">Organization</label>
          <select id="sites-org" value={slug} onChange={(e) => (setSlug(e.currentTarget.value), cancel())} data-testid="sites-org">
            {orgs.map((o) => (
              <option key={o.id} value={o.slug}>
                {o.name}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <ErrorAlert error={list.error} title="Sites could not load." />
      {notice ? (
        <p class="saved-note" role="status" data-testid="site-notice">
          {notice}
        </p>
      ) : null}
      <div class="signals-grid">
        <div class="card flush map-card">
          <MapBox el={el} error={mapError} label={`Map of the sites of ${org?.name ?? 'the organization'}`} testId="sites-map" />
          {manage ? (
            <div class="map-tools" data-testid="site-tools">
              <button type="button" class={`small ${mode.kind === 'circle' ? '' : 'secondary'}`} aria-pressed={mode.kind === 'circle'} onClick={() => start({ kind: 'circle' }, EMPTY)} data-testid="new-circle">
                New circle
              </button>
              <button type="button" class={`small ${mode.kind === 'polygon' ? '' : 'secondary'}`} aria-pressed={mode.kind === 'polygon'} onClick={() => start({ kind: 'polygon' }, EMPTY)} data-testid="new-polygon">
                New polygon
              </button>
              <span class="spacer" />
              <button type="button" class="secondary small" onClick={() => map?.fit()} disabled={!list.data?.length}>
                Fit all sites
              </button>
            </div>
          ) : null}
          <p class="map-hint muted small-print" data-testid="site-hint" aria-live="polite">
            {mode.kind === 'circle'
              ? 'Click the map to place the centre (again to move it), or type its latitude and longitude. Drag the centre to move it.'
              : mode.kind === 'polygon'
                ? form.closed
                  ? 'The polygon is closed. Drag a point to move it, or edit its numbers.'
                  : `Click the map for each corner (${form.points.length} so far); click the first point or “Close polygon” to finish.`
                : manage
                  ? 'Choose a site to edit it, or draw a new one.'
                  : 'Admins and owners of the organization draw and change its sites.'}
          </p>
          {kind ? (
            <form class="stack map-form" onSubmit={(e) => void submit(e)} data-testid="site-form" aria-labelledby="site-form-title" noValidate>
              <h2 id="site-form-title">{title}</h2>
              <ErrorAlert error={error} />
              <div class="field">
                <label for="site-name">Name</label>
                <input id="site-name" name="name" maxLength={200} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} placeholder="North depot" data-testid="site-name" />
                <FieldError error={error} name="name" />
              </div>
              {kind === 'circle' ? (
                <div class="grid-3">
                  <div class="field">
                    <label for="site-lat">Centre latitude</label>
                    <input id="site-lat" name="lat" inputMode="decimal" value={form.lat} onInput={(e) => setForm({ ...form, lat: e.currentTarget.value })} data-testid="site-lat" />
                    <FieldError error={error} name="lat" />
                  </div>
                  <div class="field">
                    <label for="site-lng">Centre longitude</label>
                    <input id="site-lng" name="lng" inputMode="decimal" value={form.lng} onInput={(e) => setForm({ ...form, lng: e.currentTarget.value })} data-testid="site-lng" />
                    <FieldError error={error} name="lng" />
                  </div>
                  <div class="field">
                    <label for="site-radius_m">Radius (metres)</label>
                    <input id="site-radius_m" name="radius_m" type="number" inputMode="numeric" min={10} max={50000} value={form.radius} onInput={(e) => setForm({ ...form, radius: e.currentTarget.value })} data-testid="site-radius" />
                    <small>10 to 50000.</small>
                    <FieldError error={error} name="radius_m" />
                  </div>
                </div>
              ) : (
                <fieldset class="stack site-points" data-field="area.coordinates" aria-describedby="err-area.coordinates">
                  <legend>Corners ({form.points.length})</legend>
                  {form.points.length === 0 ? <p class="muted small">No corner yet: click the map, or add the map's centre.</p> : null}
                  {form.points.length > 0 ? (
                    <div class="point-row point-head muted small-print" aria-hidden="true">
                      <span>#</span>
                      <span>Latitude</span>
                      <span>Longitude</span>
                    </div>
                  ) : null}
                  <ol class="point-list" data-testid="site-points">
                    {form.points.map((p, i) => (
                      <li key={i} class="point-row">
                        <span class="muted" aria-hidden="true">
                          {i + 1}
                        </span>
                        <label class="visually-hidden" for={`point-${i}-lat`}>
                          Corner {i + 1} latitude
                        </label>
                        <input id={`point-${i}-lat`} inputMode="decimal" value={p.lat} onInput={(e) => setPoint(i, { lat: e.currentTarget.value })} />
                        <label class="visually-hidden" for={`point-${i}-lng`}>
                          Corner {i + 1} longitude
                        </label>
                        <input id={`point-${i}-lng`} inputMode="decimal" value={p.lng} onInput={(e) => setPoint(i, { lng: e.currentTarget.value })} />
                        <button type="button" class="ghost small" aria-label={`Remove corner ${i + 1}`} onClick={() => setForm({ ...form, points: form.points.filter((_, j) => j !== i), closed: form.closed && form.points.length > 3 })}>
                          ✕
                        </button>
                      </li>
                    ))}
                  </ol>
                  <div class="row">
                    <button
                      type="button"
                      class="secondary small"
                      onClick={() => {
                        const c = atCentre();
                        if (c) setForm({ ...form, points: [...form.points, { lat: fix(c.lat), lng: fix(c.lng) }] });
                      }}
                    >
                      Add the map's centre
                    </button>
                    {!form.closed ? (
                      <button type="button" class="secondary small" disabled={form.points.length < 3} onClick={() => setForm({ ...form, closed: true })} data-testid="close-polygon">
                        Close polygon
                      </button>
                    ) : null}
                  </div>
                  <AreaError error={error} />
                </fieldset>
              )}
              {kind === 'circle' && mode.kind === 'circle' ? (
                <div>
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => {
                      const c = atCentre();
                      if (c) {
                        setForm({ ...form, lat: fix(c.lat), lng: fix(c.lng) });
                        map?.closeIn(c);
                      }
                    }}
                  >
                    Centre on the map's centre
                  </button>
                </div>
              ) : null}
              <div class="row">
                <button type="submit" disabled={busy || (kind === 'polygon' && !form.closed && mode.kind === 'polygon')} data-testid="site-save">
                  {busy ? 'Saving…' : mode.kind === 'edit' ? 'Save changes' : 'Create site'}
                </button>
                <button type="button" class="secondary" onClick={cancel}>
                  Cancel
                </button>
                <span class="spacer" />
                {mode.kind === 'edit' ? (
                  <button type="button" class="ghost danger-text" disabled={busy} onClick={() => void remove()} data-testid="site-delete">
                    Delete site
                  </button>
                ) : null}
              </div>
            </form>
          ) : null}
        </div>
        <div class="card stack devices">
          <h2>
            Sites <span class="count">{list.data?.length ?? 0}</span>
          </h2>
          {list.loading && !list.data ? <Loading label="Loading sites" /> : null}
          {list.data && list.data.length === 0 ? <p class="muted">No sites yet.{manage ? ' Draw one with “New circle” or “New polygon”.' : ''}</p> : null}
          <ul class="device-list" data-testid="site-list">
            {list.data?.map((s) => (
              <li key={s.id}>
                <button type="button" class={`device ${mode.kind === 'edit' && mode.id === s.id ? 'selected' : ''}`} aria-pressed={mode.kind === 'edit' && mode.id === s.id} onClick={() => select(s.id)} data-testid="site-row" data-id={s.id}>
                  <span class="device-main">
                    <strong>{s.name}</strong>
                    <small>{shapeWords(s)}</small>
                  </span>
                </button>
              </li>
            ))}
          </ul>
        </div>
      </div>
    </section>
  );
}
