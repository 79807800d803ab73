// Signals: a map and a list of the active beacons (GET /v1/signals/beacons, then moved live by the
// stream), and the feed of recent stored signals with live additions. One stream for all of it.
// The dispatcher's map (issue 20): labelled markers in a colour per person, device names, short
// trails kept in page memory, auto-fit / Fit all / Follow, and "create incident here".
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { get, qs } from '../../lib/api';
import { ago, formatDateTime } from '../../lib/format';
import { orgName, useSession } from '../session';
import { useStream } from '../sse';
import type { Beacon, Incident, LiveEvent, Signal } from '../types';
import { Empty, ErrorAlert, LiveBadge, Loading, PageHeader, useAsync } from '../ui';
import { MapBox } from './lazy-map';
import { IncidentHereForm, incidentKey, SelectedIncident, useMapIncidents, type IncidentDraft } from './map-incidents';
import { initialsOf, personColor, recordTrails } from './map-people';
import type { BeaconMap, MapPoint, MapView } from './signals-map';

const deviceKey = (b: { device_id?: string | null; meta?: Record<string, unknown>; user_id: number }): string =>
  b.device_id ?? (typeof b.meta?.device_id === 'string' ? b.meta.device_id : `user-${b.user_id}`);

const TYPE_LABEL: Record<string, string> = { capture: 'Photo', note: 'Note', checkin: 'Check-in', alert: 'Alert' };

/** "Nina Near · Van 12": the person, and the registered device's name when it has one. */
const whoOf = (b: Beacon) => (b.device_name ? `${b.user_name} · ${b.device_name}` : b.user_name);

/** The initials badge in the person's colour, as on the map. */
function PersonBadge({ userId, name }: { userId: number; name: string }) {
  return (
    <span class="person-badge" style={{ background: personColor(userId) }} aria-hidden="true" data-testid="person-badge">
      {initialsOf(name)}
    </span>
  );
}

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
    if (e.type === 'resync') {
      // Events may be missed: the devices, the feed and the map's incidents are read again.
      beacons.reload();
      feed.reload();
      incidents.reload();
    } else if (e.type === 'signal.beacon') {
      const p = e.payload as Beacon & { meta: Record<string, unknown> };
      const deviceId = typeof p.meta?.device_id === 'string' ? p.meta.device_id : null;
      const key = deviceKey({ ...p, device_id: deviceId });
      beacons.setData((list) => {
        const known = (list ?? []).find((x) => deviceKey(x) === key);
        // The stream's signal has no device name: keep the one the list had, and ask the list
        // again for a device it has not seen (it may be a registered tracker with a name).
        if (!known && deviceId !== null) refreshNames();
        const b: Beacon = { ...p, device_id: deviceId, device_name: known?.device_name ?? null, last_seen_at: p.created_at };
        return [b, ...(list ?? []).filter((x) => deviceKey(x) !== key)];
      });
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

  // A device new to the page may be a named tracker: one quiet reload of the list, at most every 5 s.
  const namesAsked = useRef(0);
  const refreshNames = () => {
    if (Date.now() - namesAsked.current < 5000) return;
    namesAsked.current = Date.now();
    void get<{ beacons: Beacon[] }>('/v1/signals/beacons').then(
      (r) => {
        const names = new Map(r.beacons.map((b) => [deviceKey(b), b.device_name] as const));
        beacons.setData((list) => list?.map((b) => (b.device_name === null && names.get(deviceKey(b)) ? { ...b, device_name: names.get(deviceKey(b)) ?? null } : b)));
      },
      () => undefined,
    );
  };

  const visibleBeacons = useMemo(() => (beacons.data ?? []).filter((b) => orgId === null || b.org_id === orgId), [beacons.data, orgId]);
  // Trails: the positions seen since the page opened, per device (page memory only, never stored).
  const trails = useRef(new Map<string, [number, number][]>());
  const trailVersion = useMemo(() => {
    recordTrails(trails.current, (beacons.data ?? []).map((b) => ({ key: deviceKey(b), lat: b.lat, lng: b.lng })));
    return {};
  }, [beacons.data]);
  const [selectedDevice, setSelectedDevice] = useState<string | null>(null);
  const [view, setView] = useState<MapView>({ auto: true, following: null });
  const [draft, setDraft] = useState<IncidentDraft | null>(null);
  const [saved, setSaved] = useState<Incident | null>(null);
  // Incidents made here from a signal (signal id → incident id): its row links to it instead.
  const [madeFrom, setMadeFrom] = useState<ReadonlyMap<number, number>>(new Map());
  const openDraft = (d: IncidentDraft) => {
    setSaved(null);
    setDraft(d);
    mapRef.current?.showPick(d);
  };
  const closeDraft = () => {
    setDraft(null);
    mapRef.current?.showPick(null);
  };
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
          <MapPanel
            beacons={visibleBeacons}
            incidents={incidents.data ?? []}
            trails={trails.current}
            trailVersion={trailVersion}
            mapRef={mapRef}
            onSelect={(key) => (key.startsWith('incident-') ? setSelected(Number(key.replace('incident-', '')) || null) : setSelectedDevice(key))}
            onPick={(at) => openDraft({ ...at, org_id: orgId, from: 'map' })}
            onView={setView}
          />
          <div class="map-tools" data-testid="map-tools">
            {!view.auto || view.following !== null ? (
              <button type="button" class="secondary small" data-testid="fit-all" onClick={() => mapRef.current?.fitAll()}>
                Fit all
              </button>
            ) : (
              <span class="muted small-print" data-testid="auto-fit">The map fits every device as they arrive and move.</span>
            )}
            {view.following !== null ? (
              <span class="following" data-testid="following" role="status">
                Following {(() => {
                  const b = visibleBeacons.find((x) => deviceKey(x) === view.following);
                  return b ? whoOf(b) : view.following;
                })()}
              </span>
            ) : null}
            <span class="spacer" />
            <button
              type="button"
              class="secondary small"
              data-testid="incident-at-centre"
              onClick={() => {
                const c = mapRef.current?.center();
                if (c) openDraft({ ...c, org_id: orgId, from: 'map' });
              }}
            >
              New incident at map centre
            </button>
          </div>
          <p class="map-hint muted small-print">Click the map to create an incident at that point.</p>
          {saved ? (
            <div class="alert success" role="status" data-testid="incident-saved">
              Incident #{saved.Id} “{saved.title}” saved and placed on the map.{' '}
              <a href={`/app/incidents/${saved.Id}`} data-testid="incident-saved-link">
                Open incident #{saved.Id}
              </a>
            </div>
          ) : null}
          {draft ? (
            <IncidentHereForm
              key={`${draft.lat},${draft.lng}`}
              draft={draft}
              onCancel={closeDraft}
              onCreated={(i) => {
                const from = draft.signalId;
                if (from !== undefined) setMadeFrom((m) => new Map(m).set(from, i.Id));
                closeDraft();
                setSaved(i);
                incidents.reload();
              }}
            />
          ) : null}
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
              const isSelected = selectedDevice === key;
              const following = view.following === key;
              return (
                <li key={key} data-testid="beacon-row" data-device-id={key} class={isSelected ? 'selected' : ''}>
                  <button
                    type="button"
                    class={`device ${isSelected ? 'selected' : ''}`}
                    aria-pressed={isSelected}
                    onClick={() => {
                      setSelectedDevice(key);
                      mapRef.current?.focus(key);
                    }}
                    disabled={b.lat === null}
                  >
                    <PersonBadge userId={b.user_id} name={b.user_name} />
                    <span class="device-main">
                      <strong>{b.user_name}</strong>
                      {b.device_name ? <small data-testid="device-name">{b.device_name}</small> : null}
                      <small class="mono">{key}</small>
                    </span>
                    <span class="device-meta">
                      <small>{ago(b.last_seen_at ?? b.created_at)}</small>
                      {b.accuracy !== null ? <small>±{Math.round(b.accuracy)} m</small> : null}
                      {orgs.length > 1 ? <small>{orgName(orgs, b.org_id)}</small> : null}
                    </span>
                  </button>
                  {isSelected && b.lat !== null ? (
                    <button
                      type="button"
                      class={`small ${following ? '' : 'secondary'} follow`}
                      aria-pressed={following}
                      data-testid="follow"
                      onClick={() => mapRef.current?.follow(following ? null : key)}
                    >
                      {following ? 'Following' : 'Follow'}
                      <span class="sr-only"> {whoOf(b)}</span>
                    </button>
                  ) : null}
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
                {s.Id !== null && madeFrom.has(s.Id) ? (
                  <small>
                    <a href={`/app/incidents/${madeFrom.get(s.Id)}`} data-testid="signal-incident-made">
                      Incident #{madeFrom.get(s.Id)} created here
                    </a>
                  </small>
                ) : s.lat !== null && s.lng !== null && !s.ticket_id ? (
                  <div>
                    <button
                      type="button"
                      class="ghost small"
                      data-testid="signal-incident-here"
                      onClick={() => openDraft({ lat: s.lat!, lng: s.lng!, org_id: s.org_id, from: 'signal', description: s.note ?? '', who: s.user_name, signalId: s.Id ?? undefined })}
                    >
                      Create incident here<span class="sr-only"> ({TYPE_LABEL[s.type] ?? s.type} from {s.user_name})</span>
                    </button>
                  </div>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}

function MapPanel({
  beacons,
  incidents,
  trails,
  trailVersion,
  mapRef,
  onSelect,
  onPick,
  onView,
}: {
  beacons: Beacon[];
  incidents: Incident[];
  trails: Map<string, [number, number][]>;
  trailVersion: object;
  mapRef: { current: BeaconMap | null };
  onSelect: (key: string) => void;
  onPick: (at: { lat: number; lng: number }) => void;
  onView: (v: MapView) => void;
}) {
  const handlers = useRef({ onSelect, onPick, onView });
  handlers.current = { onSelect, onPick, onView };
  const el = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let cancelled = false;
    void Promise.all([import('./signals-map'), get<{ map_tile_url: string; map_attribution: string }>('/v1/web/config')])
      .then(([mod, cfg]) => {
        if (cancelled || !el.current) return;
        mapRef.current = mod.createMap(
          el.current,
          { url: cfg.map_tile_url, attribution: cfg.map_attribution },
          {
            onSelect: (key) => handlers.current.onSelect(key),
            onPick: (at) => handlers.current.onPick(at),
            onView: (v) => handlers.current.onView(v),
          },
        );
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
      .map((b) => {
        const key = deviceKey(b);
        return {
          key,
          lat: b.lat!,
          lng: b.lng!,
          label: `${whoOf(b)} · ${ago(b.last_seen_at ?? b.created_at)}`,
          kind: 'beacon',
          initials: initialsOf(b.user_name),
          color: personColor(b.user_id),
          trail: trails.get(key) ?? [],
        };
      });
    for (const i of incidents) points.push({ key: incidentKey(i.Id), lat: i.lat!, lng: i.lng!, label: `Incident #${i.Id} · ${i.priority} · ${i.title}`, kind: 'incident' });
    mapRef.current?.update(points);
  }, [beacons, incidents, trails, trailVersion, ready, mapRef]);
  return (
    <MapBox el={el} error={error} label="Map of active devices and incidents" testId="beacon-map" />
  );
}
