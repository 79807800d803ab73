// A device's track replayed (issue #38, docs/dispatch.md "Tracks in the dashboard"): pick a tracker
// app or field terminal and a range (default the last 24 hours, at most 31 days as the API allows),
// and the page draws the stored positions (GET /v1/devices/:id/track) as a line, marks the stops it
// finds in them, and moves a marker along the track with a time slider (an <input type=range>: the
// arrow keys step point by point, the time is shown beside it and read as its value text).
// An org that keeps no tracks (retention.tracks_days 0) says so instead of an empty map.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { get, qs } from '../../lib/api';
import { formatDateTime, formatTime } from '../../lib/format';
import type { Loc } from '../router';
import { setQuery } from '../router';
import { orgName, useSession } from '../session';
import type { Device, FieldTerminal, Track } from '../types';
import { Empty, ErrorAlert, FieldError, Loading, PageHeader, useAsync } from '../ui';
import { MapBox, useLazyMap } from './lazy-map';
import type { TrackMap } from './track-map';
import { findStops } from './track-stops';

/** `datetime-local` text for an instant, in the browser's zone. */
const localInput = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
/** The instant of a `datetime-local` text (the browser's zone), as the API's ISO-8601; what is not a time goes as typed (the API's 422). */
const isoOf = (v: string) => {
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? v : d.toISOString();
};
const DAY = 86_400_000;

interface Choice {
  /** The id GET /v1/devices/:id/track takes: a tracker app's id, or a field terminal's device_id. */
  id: string;
  label: string;
  orgId: number;
}

function choicesOf(list: { devices: Device[]; field_terminals: FieldTerminal[] }): Choice[] {
  return [
    ...list.devices.map((d) => ({ id: String(d.id), label: `${d.name} · ${d.user_name}`, orgId: d.org_id })),
    ...list.field_terminals.map((f) => ({ id: f.device_id, label: `${f.user_name} · field terminal ${f.device_id}`, orgId: f.org_id })),
  ];
}

/** "42 min" or "1 h 5 min". */
const duration = (min: number) => (min < 60 ? `${min} min` : `${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ''}`);

export function TrackView({ loc }: { loc: Loc }) {
  const { orgs } = useSession();
  const device = loc.query.get('device') ?? '';
  const from = loc.query.get('from') ?? '';
  const to = loc.query.get('to') ?? '';
  const devices = useAsync(() => get<{ devices: Device[]; field_terminals: FieldTerminal[] }>('/v1/devices').then(choicesOf), []);
  const chosen = devices.data?.find((c) => c.id === device);
  const [form, setForm] = useState(() => ({ device, from: from ? localInput(new Date(from)) : localInput(new Date(Date.now() - DAY)), to: to ? localInput(new Date(to)) : localInput(new Date()) }));
  useEffect(() => setForm((f) => ({ ...f, device: device || f.device || devices.data?.[0]?.id || '' })), [devices.data, device]);

  // Whether the device's org keeps tracks at all: an empty track of an org that keeps none says so.
  const slug = orgs.find((o) => o.id === chosen?.orgId)?.slug;
  const retention = useAsync(() => (slug ? get<{ tracks_days: number }>(`/v1/orgs/${encodeURIComponent(slug)}/retention`).then((r) => r.tracks_days) : Promise.resolve(null)), [slug]);
  const track = useAsync(
    () => (device ? get<Track>(`/v1/devices/${encodeURIComponent(device)}/track${qs({ from, to })}`) : Promise.resolve(null)),
    [device, from, to],
  );
  const points = track.data?.points ?? [];
  const stops = useMemo(() => findStops(points), [track.data]);
  const [index, setIndex] = useState(0);
  const [playing, setPlaying] = useState(false);
  useEffect(() => {
    setIndex(0);
    setPlaying(false);
  }, [track.data]);

  const { el, map, error: mapError } = useLazyMap<TrackMap>((node, tiles) => import('./track-map').then((m) => m.createTrackMap(node, tiles)));
  const stopLabel = (i: number) => {
    const s = stops[i]!;
    return `Stop ${i + 1}: ${formatTime(s.start)} to ${formatTime(s.end)} (${duration(s.minutes)})`;
  };
  useEffect(() => {
    map?.show(
      points.map((p) => [p.lat, p.lng]),
      stops.map((s, i) => ({ lat: s.lat, lng: s.lng, label: stopLabel(i) })),
    );
  }, [map, track.data]);
  const at = points[Math.min(index, points.length - 1)];
  useEffect(() => {
    if (map && at) map.moveTo([at.lat, at.lng], `Position at ${formatDateTime(at.at)}`);
  }, [map, at]);

  // Play: one point every 200 ms, from where the slider is; the slider stays the way to seek.
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (!playing) return;
    timer.current = window.setInterval(() => {
      setIndex((i) => {
        if (i + 1 >= points.length) {
          setPlaying(false);
          return i;
        }
        return i + 1;
      });
    }, 200);
    return () => window.clearInterval(timer.current);
  }, [playing, points.length]);

  const show = (e: Event) => {
    e.preventDefault();
    setQuery({ device: form.device, from: isoOf(form.from), to: isoOf(form.to) });
    if (form.device === device && isoOf(form.from) === from && isoOf(form.to) === to) track.reload();
  };
  const stopAt = stops.findIndex((s) => index >= s.from && index <= s.to);
  const tracksOff = retention.data === 0;

  return (
    <section class="view">
      <a class="back" href="/app/devices">
        ← Devices
      </a>
      <PageHeader title="Track" sub="Where a device was: its stored positions replayed, with its stops." />
      <form class="card stack" onSubmit={show} data-testid="track-form" noValidate>
        <ErrorAlert error={devices.error ?? track.error} />
        <div class="grid-3">
          <div class="field">
            <label for="track-device">Device</label>
            <select id="track-device" value={form.device} onChange={(e) => setForm({ ...form, device: e.currentTarget.value })} data-testid="track-device" disabled={!devices.data}>
              {devices.data?.length === 0 ? <option value="">No devices</option> : null}
              {devices.data?.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.label}
                  {orgs.length > 1 ? ` · ${orgName(orgs, c.orgId)}` : ''}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="track-from">From</label>
            <input id="track-from" name="from" type="datetime-local" value={form.from} onInput={(e) => setForm({ ...form, from: e.currentTarget.value })} data-testid="track-from" />
            <FieldError error={track.error} name="from" />
          </div>
          <div class="field">
            <label for="track-to">To</label>
            <input id="track-to" name="to" type="datetime-local" value={form.to} onInput={(e) => setForm({ ...form, to: e.currentTarget.value })} data-testid="track-to" />
            <small>At most 31 days after “From”.</small>
            <FieldError error={track.error} name="to" />
          </div>
        </div>
        <div class="row">
          <button type="submit" disabled={!form.device} data-testid="track-show">
            Show track
          </button>
        </div>
      </form>
      {device && track.loading && !track.data ? <Loading label="Loading the track" /> : null}
      {tracksOff && points.length === 0 ? (
        <div data-testid="track-empty">
          <Empty title={`${orgName(orgs, chosen!.orgId)} keeps no tracks`}>
            Only the last position of each device is kept. An owner of the organization can keep tracks for a number of days (its retention setting <span class="mono">tracks_days</span>,
            docs/trackers.md).
          </Empty>
        </div>
      ) : track.data && points.length === 0 ? (
        <div data-testid="track-empty">
          <Empty title="No positions in this range">
            Nothing was recorded for this device between {formatDateTime(track.data.from)} and {formatDateTime(track.data.to)}. Try a longer range.
          </Empty>
        </div>
      ) : null}
      <div class={`card flush map-card${points.length === 0 ? ' hidden-map' : ''}`}>
        <MapBox el={el} error={mapError} label="Map of the track" testId="track-map" />
        {at ? (
          <div class="stack track-replay" data-testid="track-replay">
            <div class="row">
              <button type="button" class="secondary small" aria-pressed={playing} onClick={() => (index + 1 >= points.length ? (setIndex(0), setPlaying(true)) : setPlaying(!playing))} data-testid="track-play">
                {playing ? 'Pause' : 'Play'}
              </button>
              <label for="track-slider" class="grow">
                Time
              </label>
              <output for="track-slider" data-testid="track-time">
                {formatDateTime(at.at)}
                {stopAt >= 0 ? ` · stop ${stopAt + 1}` : ''}
              </output>
            </div>
            <input
              id="track-slider"
              type="range"
              min={0}
              max={points.length - 1}
              step={1}
              value={index}
              aria-valuetext={`${formatDateTime(at.at)}, point ${index + 1} of ${points.length}`}
              onInput={(e) => (setPlaying(false), setIndex(Number(e.currentTarget.value)))}
              data-testid="track-slider"
            />
            <p class="muted small-print" data-testid="track-summary">
              {points.length} points{track.data && track.data.total_points > points.length ? ` (of ${track.data.total_points} recorded, thinned)` : ''} from {formatDateTime(points[0]!.at)} to{' '}
              {formatDateTime(points[points.length - 1]!.at)}; {stops.length === 0 ? 'no stop of 5 minutes or more' : stops.length === 1 ? '1 stop' : `${stops.length} stops`}.
            </p>
            {stops.length > 0 ? (
              <ol class="device-list" data-testid="track-stops">
                {stops.map((s, i) => (
                  <li key={s.from}>
                    <button type="button" class={`device ${stopAt === i ? 'selected' : ''}`} onClick={() => (setPlaying(false), setIndex(s.from))} data-testid="track-stop">
                      <span class="track-stop-badge" aria-hidden="true">
                        {i + 1}
                      </span>
                      <span class="device-main">
                        <strong>{stopLabel(i)}</strong>
                        <small>
                          {s.lat.toFixed(5)}, {s.lng.toFixed(5)}
                        </small>
                      </span>
                    </button>
                  </li>
                ))}
              </ol>
            ) : null}
          </div>
        ) : null}
      </div>
    </section>
  );
}
