// Signals: a map and a list of the active beacons (GET /v1/signals/beacons, then moved live by the
// stream), and the feed of recent stored signals with live additions. One stream for all of it.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { get, qs } from '../../lib/api';
import { ago, formatDateTime } from '../../lib/format';
import { orgName, useSession } from '../session';
import { useStream } from '../sse';
import type { Beacon, Incident, LiveEvent, Signal } from '../types';
import { Empty, ErrorAlert, LiveBadge, Loading, PageHeader, useAsync } from '../ui';
import { incidentKey, SelectedIncident, useMapIncidents } from './map-incidents';
import type { BeaconMap, MapPoint } from './signals-map';

const deviceKey = (b: { device_id?: string | null; meta?: Record<string, unknown>; user_id: number }): string =>
  b.device_id ?? (typeof b.meta?.device_id === 'string' ? b.meta.device_id : `user-${b.user_id}`);

const TYPE_LABEL: Record<string, string> = { capture: 'Photo', note: 'Note', checkin: 'Check-in', alert: 'Alert' };

export function SignalsView() {
  const { orgId, orgs } = useSession();
  const [typeFilter, setTypeFilter] = useState('');
  const beacons = useAsync(() => get<{ beacons: Beacon[] }>('/v1/signals/beacons').then((r) => r.beacons), []);
  const feed = useAsync(() => get<{ signals: Signal[]; has_more: boolean }>(`/v1/signals${qs({ limit: 30, type: typeFilter, org_id: orgId ?? undefined })}`), [typeFilter, orgId]);
  const incidents = useMapIncidents(orgId);
  const [selected, setSelected] = useState<number | null>(null);
  const [live, setLive] = useState<Signal[]>([]);
  useEffect(() => setLive([]), [typeFilter, orgId]);

  const state = useStream('/v1/signals/stream', (e: LiveEvent) => {
    if (e.type === 'signal.beacon') {
      const p = e.payload as Beacon & { meta: Record<string, unknown> };
      const b: Beacon = { ...p, device_id: typeof p.meta?.device_id === 'string' ? p.meta.device_id : null, last_seen_at: p.created_at };
      const key = deviceKey(b);
      beacons.setData((list) => [b, ...(list ?? []).filter((x) => deviceKey(x) !== key)]);
    } else if (e.type === 'beacon_off') {
      const p = e.payload as { device_id: string | null; user_id: number };
      const key = deviceKey(p);
      beacons.setData((list) => (list ?? []).filter((x) => deviceKey(x) !== key));
    } else if (e.type.startsWith('signal.')) {
      const s = e.payload as Signal;
      if (typeFilter && s.type !== typeFilter) return;
      if (orgId !== null && s.org_id !== orgId) return;
      setLive((l) => [s, ...l.filter((x) => x.Id !== s.Id)].slice(0, 50));
      // An alert opens (or joins) an incident: show it on the map.
      if (s.type === 'alert') incidents.reload();
    }
  });

  const visibleBeacons = useMemo(() => (beacons.data ?? []).filter((b) => orgId === null || b.org_id === orgId), [beacons.data, orgId]);
  const signals = useMemo(() => {
    const seen = new Set<number | null>();
    return [...live, ...(feed.data?.signals ?? [])].filter((s) => (s.Id === null || seen.has(s.Id) ? false : (seen.add(s.Id), true)));
  }, [live, feed.data]);

  const mapRef = useRef<BeaconMap | null>(null);

  return (
    <section class="view">
      <PageHeader title="Signals" sub="Live positions of field devices and what they report.">
        <LiveBadge state={state} />
      </PageHeader>
      <div class="signals-grid">
        <div class="card flush map-card">
          <MapPanel beacons={visibleBeacons} incidents={incidents.data ?? []} mapRef={mapRef} onSelect={(key) => setSelected(Number(key.replace('incident-', '')) || null)} />
        </div>
        <div class="card stack devices">
          <h2>
            Active devices <span class="count">{visibleBeacons.length}</span>
          </h2>
          <ErrorAlert error={beacons.error} title="Devices could not load." />
          {beacons.loading && !beacons.data ? <Loading label="Loading devices" /> : null}
          {beacons.data && visibleBeacons.length === 0 ? <p class="muted">No device is sending its position. Start beacon mode in the field terminal at <a href="/field">/field</a>.</p> : null}
          <ul class="device-list" data-testid="beacon-list">
            {visibleBeacons.map((b) => {
              const key = deviceKey(b);
              return (
                <li key={key} data-testid="beacon-row" data-device-id={key}>
                  <button type="button" class="device" onClick={() => mapRef.current?.focus(key)} disabled={b.lat === null}>
                    <span class="device-dot" aria-hidden="true" />
                    <span class="device-main">
                      <strong>{b.user_name}</strong>
                      <small class="mono">{key}</small>
                    </span>
                    <span class="device-meta">
                      <small>{ago(b.last_seen_at ?? b.created_at)}</small>
                      {b.accuracy !== null ? <small>±{Math.round(b.accuracy)} m</small> : null}
                      {orgs.length > 1 ? <small>{orgName(orgs, b.org_id)}</small> : null}
                    </span>
                  </button>
                </li>
              );
            })}
          </ul>
        </div>
      </div>

      <SelectedIncident incidents={incidents} selected={selected} onSelect={(id) => (setSelected(id), id !== null && mapRef.current?.focus(incidentKey(id)))} />

      <div class="card stack">
        <div class="row">
          <h2>Recent signals</h2>
          <span class="spacer" />
          <label class="visually-hidden" for="sig-type">
            Type
          </label>
          <select id="sig-type" class="compact" value={typeFilter} onChange={(e) => setTypeFilter(e.currentTarget.value)}>
            <option value="">All types</option>
            {Object.entries(TYPE_LABEL).map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </div>
        <ErrorAlert error={feed.error} title="Signals could not load." />
        {feed.loading && !feed.data ? <Loading label="Loading signals" /> : null}
        {feed.data && signals.length === 0 ? <Empty title="No signals yet">Photos, notes, check-ins and alerts from the field appear here as they arrive.</Empty> : null}
        <ul class="feed" data-testid="signal-feed">
          {signals.map((s) => (
            <li key={s.Id} class={`feed-item type-${s.type}`} data-testid="signal-row">
              <span class={`badge ${s.type === 'alert' ? 'danger' : s.type === 'capture' ? 'brand' : s.type === 'checkin' ? 'ok' : ''}`}>{TYPE_LABEL[s.type] ?? s.type}</span>
              <div class="feed-main">
                <div>
                  <strong>{s.user_name}</strong> <span class="muted" title={formatDateTime(s.created_at)}>{ago(s.created_at)}</span>
                </div>
                {s.note ? <p class="prewrap">{s.note}</p> : null}
                {s.image_url ? (
                  <a href={s.image_url} target="_blank" rel="noopener">
                    <img class="thumb" src={s.image_url} alt={s.note ?? 'Photo from the field'} loading="lazy" />
                  </a>
                ) : null}
                <small class="muted">
                  {s.lat !== null && s.lng !== null ? `${s.lat.toFixed(5)}, ${s.lng.toFixed(5)}` : 'No location'}
                  {s.ticket_id ? (
                    <>
                      {' · '}
                      <a href={`/app/incidents/${s.ticket_id}`}>Incident #{s.ticket_id}</a>
                    </>
                  ) : null}
                  {orgs.length > 1 ? ` · ${orgName(orgs, s.org_id)}` : ''}
                </small>
              </div>
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}

function MapPanel({ beacons, incidents, mapRef, onSelect }: { beacons: Beacon[]; incidents: Incident[]; mapRef: { current: BeaconMap | null }; onSelect: (key: string) => void }) {
  const select = useRef(onSelect);
  select.current = onSelect;
  const el = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let cancelled = false;
    void Promise.all([import('./signals-map'), get<{ map_tile_url: string; map_attribution: string }>('/v1/web/config')])
      .then(([mod, cfg]) => {
        if (cancelled || !el.current) return;
        mapRef.current = mod.createMap(el.current, { url: cfg.map_tile_url, attribution: cfg.map_attribution }, (key) => key.startsWith('incident-') && select.current(key));
        setReady(true);
      })
      .catch((err: unknown) => setError(err));
    return () => {
      cancelled = true;
      mapRef.current?.destroy();
      mapRef.current = null;
    };
  }, [mapRef]);
  useEffect(() => {
    if (!ready) return;
    const points: MapPoint[] = beacons
      .filter((b) => b.lat !== null && b.lng !== null)
      .map((b) => ({ key: deviceKey(b), lat: b.lat!, lng: b.lng!, label: `${b.user_name} · ${ago(b.last_seen_at ?? b.created_at)}`, kind: 'beacon' }));
    for (const i of incidents) points.push({ key: incidentKey(i.Id), lat: i.lat!, lng: i.lng!, label: `${i.priority} · ${i.title}`, kind: 'incident' });
    mapRef.current?.update(points);
  }, [beacons, incidents, ready, mapRef]);
  return (
    <div class="map-wrap">
      <div ref={el} class="map" data-testid="beacon-map" role="region" aria-label="Map of active devices" />
      {error ? (
        <div class="map-overlay">
          <ErrorAlert error={error} title="The map could not load." />
        </div>
      ) : null}
    </div>
  );
}
