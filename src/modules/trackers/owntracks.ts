import { badRequest, coordinate, compact, timestamp, type Fix } from './fix.js';

type Json = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * OwnTracks' `_type: "location"` (its JSON booklet): `lat`, `lon`, `tst` (epoch s), `acc` (m),
 * `alt` (m), `vel` (km/h), `cog` (degrees), `batt` (%), `bs` (battery status, 2 = charging),
 * `tid`, `t` (trigger). vel is turned into m/s like every other protocol's speed.
 */
export function owntracksFix(msg: Json): Fix {
  if (msg.tst === undefined) throw badRequest('tst', 'is required');
  const vel = num(msg.vel);
  return {
    lat: coordinate(num(msg.lat), 'lat'),
    lng: coordinate(num(msg.lon), 'lon'),
    at: timestamp(num(msg.tst) ?? str(msg.tst), 'tst'),
    accuracy: num(msg.acc) !== undefined && (msg.acc as number) >= 0 ? (msg.acc as number) : null,
    alarm: null,
    meta: compact({
      speed: vel === undefined || vel < 0 ? undefined : vel / 3.6,
      heading: num(msg.cog),
      altitude: num(msg.alt),
      battery: num(msg.batt),
      charging: num(msg.bs) === undefined ? undefined : msg.bs === 2,
      tid: str(msg.tid),
      trigger: str(msg.t),
    }),
  };
}

/** What a teammate looks like on OwnTracks' map. */
export interface Teammate {
  device_id: string;
  user_slug: string;
  name: string;
  tid: string;
  lat: number;
  lng: number;
  accuracy: number | null;
  position_at: string;
}

/**
 * The answer OwnTracks shows as friends: per teammate a `location` and a `card` (its name).
 * Android keys friends by `tid` (it builds the topic `owntracks/http/<tid>`), iOS by `topic`, so
 * both are set, and tids are made unique within the answer.
 */
export function friends(mates: Teammate[], ownTid: string | undefined): Json[] {
  const used = new Set<string>(ownTid ? [ownTid] : []);
  const out: Json[] = [];
  for (const m of mates) {
    let tid = m.tid;
    for (let i = 1; used.has(tid); i++) tid = `${m.tid.slice(0, 1)}${i}`;
    used.add(tid);
    const topic = `owntracks/${m.user_slug}/${m.device_id}`;
    const tst = Math.floor(Date.parse(m.position_at) / 1000);
    out.push({ _type: 'location', lat: m.lat, lon: m.lng, tst, tid, topic, ...(m.accuracy === null ? {} : { acc: Math.round(m.accuracy) }) });
    out.push({ _type: 'card', name: m.name, tid, topic });
  }
  return out;
}
