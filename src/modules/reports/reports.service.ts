import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { DAY, iso } from '../../lib/clock.js';
import { invalidField } from '../../lib/errors.js';
import { orgAccess } from '../orgs/index.js';
import { toCsv } from './csv.js';
import { userNames } from './labels.repository.js';
import * as repo from './reports.repository.js';

/** The longest range of one visits report, and the default (ending now). */
const MAX_RANGE_MS = 92 * DAY;
const DEFAULT_RANGE_MS = 7 * DAY;

export interface Visit {
  /** Null when the arrival was before the range. */
  arrived_at: string | null;
  /** Null while still there (or when the departure is after the range). */
  departed_at: string | null;
  duration_seconds: number | null;
}

function time(field: 'from' | 'to', v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw invalidField(field, 'must be an ISO-8601 time');
  return ms;
}

const visit = (arrived: string | null, departed: string | null): Visit => ({
  arrived_at: arrived,
  departed_at: departed,
  duration_seconds: arrived !== null && departed !== null ? Math.round((Date.parse(departed) - Date.parse(arrived)) / 1000) : null,
});

/**
 * Pairs arrivals and departures per key, in time order: an arrival opens a visit, the next departure
 * closes it; a departure with no open visit is one whose arrival was before the range; a second
 * arrival while one is open closes the first without a departure (a lost exit).
 */
function pair<K>(events: { key: string; meta: K; arrive: boolean; at: string }[]) {
  const groups = new Map<string, { meta: K; visits: Visit[]; open: string | null }>();
  for (const e of events) {
    let g = groups.get(e.key);
    if (!g) groups.set(e.key, (g = { meta: e.meta, visits: [], open: null }));
    if (e.arrive) {
      if (g.open !== null) g.visits.push(visit(g.open, null));
      g.open = e.at;
    } else {
      g.visits.push(visit(g.open, e.at));
      g.open = null;
    }
  }
  return [...groups.values()].map((g) => {
    const visits = g.open !== null ? [...g.visits, visit(g.open, null)] : g.visits;
    return { ...g.meta, visits, total_seconds: visits.reduce((n, v) => n + (v.duration_seconds ?? 0), 0) };
  });
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);

/**
 * GET /v1/orgs/:org_slug/reports/visits (admins and owners): per person and site (the
 * `site.enter` / `site.exit` audit entries) and per incident and person (the `on_scene` /
 * `departed` timeline events), each visit's arrival, departure and duration, from the stored events.
 */
export async function visitsReport(ctx: AppContext, actor: Actor, slug: string, q: { from?: string | undefined; to?: string | undefined }) {
  const { org } = await orgAccess(ctx, actor, { slug }, { role: 'admin' });
  const now = ctx.clock.now().getTime();
  const toMs = time('to', q.to, now);
  const fromMs = time('from', q.from, toMs - DEFAULT_RANGE_MS);
  if (toMs < fromMs) throw invalidField('to', 'must not be before from');
  if (toMs - fromMs > MAX_RANGE_MS) throw invalidField('to', 'the range is at most 92 days');
  const from = iso(new Date(fromMs));
  const to = iso(new Date(toMs));

  const siteRows = await repo.siteEvents(ctx.db, org.id, actor.mode, from, to);
  const sites = pair(
    siteRows.map((r) => {
      const meta = r.meta;
      const siteId = num(meta.site_id);
      const deviceId = typeof meta.device_id === 'string' ? meta.device_id : r.device_id;
      return {
        key: `${r.user_id ?? ''}|${deviceId ?? ''}|${siteId ?? ''}`,
        meta: { user_id: r.user_id, user_name: r.user_name, device_id: deviceId, site_id: siteId, site_name: typeof meta.site_name === 'string' ? meta.site_name : null },
        arrive: r.action === 'site.enter',
        at: r.created_at,
      };
    }),
  );

  const incidentRows = await repo.incidentArrivals(ctx.db, org.id, actor.mode, from, to);
  const who = incidentRows.map((r) => num(r.data.user_id) ?? r.actor_id);
  const names = await userNames(ctx.db, [...new Set(who.filter((u): u is number => u !== null))]);
  const incidents = pair(
    incidentRows.map((r, i) => {
      const userId = who[i] ?? null;
      return {
      key: `${r.incident_id}|${userId ?? ''}`,
      meta: { incident_id: r.incident_id, title: r.title, user_id: userId, user_name: userId === null ? null : (names.get(userId) ?? null) },
      arrive: r.type === 'on_scene',
      at: r.created_at,
      };
    }),
  );
  return { from, to, sites, incidents };
}

export type VisitsReport = Awaited<ReturnType<typeof visitsReport>>;

export const CSV_COLUMNS = ['kind', 'user_id', 'user_name', 'device_id', 'site_id', 'site_name', 'incident_id', 'incident_title', 'arrived_at', 'departed_at', 'duration_seconds'] as const;

/** The report as CSV (RFC 4180, CRLF): one row per visit, sites first. */
export function visitsCsv(r: VisitsReport): string {
  const rows = [
    ...r.sites.flatMap((s) => s.visits.map((v) => ['site', s.user_id, s.user_name, s.device_id, s.site_id, s.site_name, null, null, v.arrived_at, v.departed_at, v.duration_seconds])),
    ...r.incidents.flatMap((s) => s.visits.map((v) => ['incident', s.user_id, s.user_name, null, null, null, s.incident_id, s.title, v.arrived_at, v.departed_at, v.duration_seconds])),
  ];
  return toCsv(CSV_COLUMNS, rows);
}
