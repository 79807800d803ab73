// Devices: tracker apps (Traccar Client, OwnTracks, GPSLogger) registered as beacon sources. The
// token, and so the URLs and OwnTracks' QR code that carry it, are shown once, right after creation.
import qrcode from 'qrcode-generator';
import { useState } from 'preact/hooks';
import { del, get, post } from '../../lib/api';
import { orgName, useSession } from '../session';
import { CopyButton, Empty, ErrorAlert, Loading, PageHeader, relative, useAsync } from '../ui';

interface Device {
  id: number;
  name: string;
  user_name: string;
  org_id: number;
  device_id: string;
  livemode: boolean;
  osmand_url: string;
  owntracks_url: string;
  gpslogger_url: string;
  traccar_json_url: string;
  active: boolean;
  last_position: { lat: number | null; lng: number | null; recorded_at: string } | null;
  last_seen_at: string | null;
}
type Created = Device & { token: string; owntracks_config: Record<string, unknown> };
/** A field terminal (/field) known by its beacons or its stored track (issue #38). */
interface FieldTerminal {
  device_id: string;
  user_name: string;
  org_id: number;
  active: boolean;
  last_seen_at: string | null;
}

const URLS: ['osmand_url' | 'owntracks_url' | 'gpslogger_url' | 'traccar_json_url', string][] = [
  ['osmand_url', 'OsmAnd / Traccar Client'],
  ['owntracks_url', 'OwnTracks (HTTP mode)'],
  ['gpslogger_url', 'GPSLogger custom URL'],
  ['traccar_json_url', 'Traccar Client JSON'],
];

/** OwnTracks opens `owntracks:///config?inline=<base64 of the .otrc>` links (its remote-config booklet). */
function owntracksQr(config: Record<string, unknown>): string {
  const link = `owntracks:///config?inline=${btoa(JSON.stringify(config))}`;
  const qr = qrcode(0, 'M');
  qr.addData(link);
  qr.make();
  return qr.createDataURL(4, 8);
}

function Urls({ d }: { d: Device }) {
  return (
    <dl class="stack">
      {URLS.map(([key, label]) => (
        <div key={key}>
          <dt class="muted">{label}</dt>
          <dd class="link-box">
            <span class="mono">{d[key]}</span>
            <CopyButton text={d[key]} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function NewDevice({ created }: { created: Created }) {
  return (
    <div class="card stack" data-testid="device-created">
      <h2>“{created.name}” is ready</h2>
      <p>
        Token (shown once): <span class="mono secret-text" data-testid="device-token">{created.token}</span> <CopyButton text={created.token} />
      </p>
      <Urls d={created} />
      <p class="muted">OwnTracks: scan this with the phone's camera to configure it (HTTP mode, this device's token).</p>
      <img src={owntracksQr(created.owntracks_config)} alt="OwnTracks configuration QR code" data-testid="owntracks-qr" width={240} height={240} />
      <p class="muted">Step-by-step settings for each app are in docs/trackers.md.</p>
    </div>
  );
}

export function DevicesView() {
  const { orgs, orgId } = useSession();
  const all = useAsync(() => get<{ devices: Device[]; field_terminals: FieldTerminal[] }>('/v1/devices'), []);
  const list = { ...all, data: all.data?.devices, setData: (f: (d: Device[] | undefined) => Device[] | undefined) => all.setData((a) => a && { ...a, devices: f(a.devices) ?? [] }) };
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Created | null>(null);
  const [error, setError] = useState<unknown>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const d = await post<Created>('/v1/devices', { name, ...(orgId === null ? {} : { org_id: orgId }) });
      setCreated(d);
      setName('');
      // The list shows URLs with a placeholder for the token: fetch it again rather than keep the secret there.
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (d: Device) => {
    if (!confirm(`Revoke "${d.name}"? Its app stops being accepted at once and its beacon is switched off.`)) return;
    try {
      await del(`/v1/devices/${d.id}`);
      list.setData((l) => l?.filter((x) => x.id !== d.id));
    } catch (err) {
      setError(err);
    }
  };
  const shown = list.data?.filter((d) => orgId === null || d.org_id === orgId);
  const terminals = all.data?.field_terminals.filter((f) => orgId === null || f.org_id === orgId);
  return (
    <section class="view">
      <PageHeader title="Devices" sub="Phones and trackers that report positions with Traccar Client, OwnTracks or GPSLogger.">
        <a class="button secondary" href="/app/track" data-testid="tracks-link">
          Tracks
        </a>
      </PageHeader>
      <ErrorAlert error={list.error ?? error} />
      <form class="card row" onSubmit={(e) => void create(e)} data-testid="new-device">
        <label for="device-name">Name</label>
        <input id="device-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="Van 12" />
        <button type="submit">Add device</button>
      </form>
      {created ? <NewDevice created={created} /> : null}
      {list.loading && !list.data ? <Loading label="Loading devices" /> : null}
      {shown && shown.length === 0 ? <Empty title="No devices yet">Add one, then enter its token and URL in the app.</Empty> : null}
      <ul class="cards" data-testid="device-list">
        {shown?.map((d) => (
          <li key={d.id} class="card stack" data-testid="device-row">
            <div class="row">
              <h2>{d.name}</h2>
              {d.active ? <span class="badge brand">Beaconing</span> : <span class="badge">Off</span>}
              {!d.livemode ? <span class="badge warn">Test mode</span> : null}
            </div>
            <p class="muted">
              {d.user_name} · {orgName(orgs, d.org_id)} · <span class="mono">{d.device_id}</span> ·{' '}
              {d.last_seen_at ? `seen ${relative(d.last_seen_at)}` : 'never seen'}
              {typeof d.last_position?.lat === 'number' ? ` · ${d.last_position.lat.toFixed(5)}, ${d.last_position.lng?.toFixed(5) ?? ''}` : ''}
            </p>
            <Urls d={d} />
            <div class="row">
              <a class="button secondary small" href={`/app/track?device=${d.id}`} aria-label={`Track of ${d.name}`} data-testid="device-track">
                Track
              </a>
              <button type="button" class="secondary small danger-text" onClick={() => void revoke(d)}>
                Revoke
              </button>
            </div>
          </li>
        ))}
      </ul>
      {terminals && terminals.length > 0 ? (
        <div class="card stack" data-testid="field-terminals">
          <h2>Field terminals</h2>
          <p class="muted">Phones running the field page (/field), known by their beacons.</p>
          <ul class="list">
            {terminals.map((f) => (
              <li key={`${f.org_id}-${f.device_id}`} class="row" data-testid="field-terminal">
                <span class="grow">
                  <strong>{f.user_name}</strong> <span class="mono">{f.device_id}</span>
                  <small class="muted"> · {orgName(orgs, f.org_id)} · {f.active ? 'beaconing' : f.last_seen_at ? `seen ${relative(f.last_seen_at)}` : 'never seen'}</small>
                </span>
                <a class="button secondary small" href={`/app/track?device=${encodeURIComponent(f.device_id)}`} aria-label={`Track of ${f.user_name}'s ${f.device_id}`}>
                  Track
                </a>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
