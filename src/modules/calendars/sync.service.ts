// Reading a host's external calendars into busy intervals. Every exchange with a calendar server
// happens outside any transaction, so a slow or hanging server never holds a lock that bookings
// need; only the final replacement of the connection's intervals is one short transaction.
import type { AppContext } from '../../context.js';
import { DAY, HOUR, MINUTE, iso } from '../../lib/clock.js';
import { findUserById } from '../users/index.js';
import * as repo from './calendars.repository.js';
import type { ConnectionRow, DavState } from './calendars.repository.js';
import { reachReason } from '../deliveries/index.js';
import { discover, eventsBetween, listCalendars, type DavOptions } from './dav.js';
import { CalendarLimitError, type Interval } from './expand.js';
import { expandOffThread } from './expand-pool.js';
import { guardedFetch } from './http.js';
import { open } from './secret-box.js';

/** An unchanged calendar is still read in full this often: the window moves a day every day. */
const REFRESH_MS = 6 * HOUR;
const LEASE_MS = 5 * MINUTE;
const DEFAULT_ADVANCE_DAYS = 60;


/** The URLs of the calendars that count as busy: the user's pick, else every discovered one. */
export function busyUrls(row: Pick<ConnectionRow, 'calendars' | 'busy_calendars'>, items = row.calendars.items ?? []): string[] {
  const all = items.map((c) => c.url);
  return row.busy_calendars === null ? all : row.busy_calendars.filter((u) => all.includes(u));
}

export function davOptions(ctx: AppContext, row: Pick<ConnectionRow, 'username' | 'secret'>): DavOptions {
  return {
    timeoutMs: ctx.config.calendarTimeoutMs,
    maxBytes: ctx.config.calendarMaxBytes,
    allowPrivate: ctx.config.allowPrivateWebhooks,
    auth: row.username !== null ? { username: row.username, password: row.secret ? open(ctx.secret, row.secret) : '' } : undefined,
  };
}

type Outcome = { changed: false; patch?: Partial<ConnectionRow> } | { changed: true; intervals: Interval[]; patch?: Partial<ConnectionRow> };

async function readIcs(ctx: AppContext, row: ConnectionRow, window: Window, fresh: boolean): Promise<Outcome> {
  const res = await guardedFetch(row.url, {
    ...davOptions(ctx, row),
    headers: { accept: 'text/calendar, */*;q=0.5', ...(fresh && row.etag ? { 'if-none-match': row.etag } : {}) },
    maxRedirects: 3,
  });
  if (res.status === 304) return { changed: false };
  if (res.status < 200 || res.status > 299) throw new Error(`the feed answered HTTP ${res.status}`);
  const etag = typeof res.headers.etag === 'string' ? res.headers.etag : null;
  return { changed: true, intervals: await expandOffThread(ctx, [res.body], window), patch: { etag } };
}

async function readCaldav(ctx: AppContext, row: ConnectionRow, window: Window, fresh: boolean): Promise<Outcome> {
  const o = davOptions(ctx, row);
  const before = row.calendars;
  // One PROPFIND (Depth 1) on the home both refreshes the list and says, by CTag, what changed.
  const found = before.home ? { home: before.home, calendars: await listCalendars(before.home, o) } : await discover(row.url, o);
  const state: DavState = { home: found.home, items: found.calendars };
  const wanted = busyUrls(row, found.calendars);
  const old = new Map((before.items ?? []).map((c) => [c.url, c.ctag]));
  const same = wanted.every((u) => {
    const c = found.calendars.find((x) => x.url === u);
    return typeof c?.ctag === 'string' && old.get(u) === c.ctag;
  });
  if (fresh && same) return { changed: false, patch: { calendars: state } };
  const texts: string[] = [];
  for (const u of wanted) texts.push(...(await eventsBetween(u, window.from, window.to, o)));
  return { changed: true, intervals: await expandOffThread(ctx, texts, window), patch: { calendars: state } };
}

interface Window {
  from: number;
  to: number;
  hostZone: string;
}

async function windowOf(ctx: AppContext, userId: number): Promise<Window> {
  const now = ctx.clock.now().getTime();
  const days = (await repo.maxAdvanceDays(ctx.db, userId)) ?? DEFAULT_ADVANCE_DAYS;
  const user = await findUserById(ctx.db, userId);
  // A day either side: slots are computed for whole days in any zone, and buffers reach past them.
  return { from: now - DAY, to: now + (Math.max(days, 1) + 2) * DAY, hostZone: user?.timezone ?? 'UTC' };
}

/** What the owner reads in `error`: never a resolved address or a socket's own error (the detail is logged). */
function failureReason(ctx: AppContext, err: unknown): string {
  if (err instanceof CalendarLimitError) return `${err.message}; it is not read again until it is changed or synced by hand`;
  return reachReason(ctx.log, err, 'the calendar server');
}

/**
 * Syncs one connection now, unless another sync holds it (then nothing happens). Failure keeps the
 * last good busy intervals and records `status: error` with the reason; `failing_since` remembers
 * when it began. A calendar over a safety limit (CalendarLimitError: too many repeats, a hostile
 * time zone, the reader's memory or deadline) is also halted: the background job and restarts
 * leave it alone until its owner changes it or syncs it (`resume`, which lifts the halt).
 * Returns whether this call did the sync.
 */
export async function syncConnection(ctx: AppContext, id: number, opts: { resume?: boolean } = {}): Promise<boolean> {
  const now = ctx.clock.now();
  if (!(await repo.claimSync(ctx.db, id, iso(now), iso(new Date(now.getTime() + LEASE_MS)), opts.resume))) return false;
  const row = await repo.findConnection(ctx.db, id);
  if (!row) return false;
  const fresh = row.refreshed_at !== null && now.getTime() - Date.parse(row.refreshed_at) < REFRESH_MS;
  try {
    const window = await windowOf(ctx, row.user_id);
    const out = row.kind === 'ics' ? await readIcs(ctx, row, window, fresh) : await readCaldav(ctx, row, window, fresh);
    const done = { ...out.patch, status: 'ok' as const, error: null, failing_since: null, last_synced_at: iso(ctx.clock.now()), sync_lease_until: null, updated_at: iso(ctx.clock.now()) };
    await ctx.transaction(async (tx) => {
      if (!out.changed) return void (await repo.updateConnection(tx.db, id, done));
      await repo.replaceBusy(tx.db, id, row.user_id, row.livemode, out.intervals);
      await repo.updateConnection(tx.db, id, { ...done, refreshed_at: iso(now) });
    });
  } catch (err) {
    const halted = err instanceof CalendarLimitError;
    const reason = failureReason(ctx, err).slice(0, 500);
    ctx.log.warn({ connection: id, reason, halted }, 'calendar sync failed');
    await repo.updateConnection(ctx.db, id, {
      status: 'error',
      error: reason,
      failing_since: row.failing_since ?? iso(now),
      last_synced_at: iso(ctx.clock.now()),
      sync_lease_until: null,
      ...(halted ? { halted_at: iso(ctx.clock.now()) } : {}),
      updated_at: iso(ctx.clock.now()),
    });
  }
  return true;
}

/** The background job: every connection not synced within the interval, a few at a time. */
export async function syncDueCalendars(ctx: AppContext): Promise<number> {
  const before = iso(new Date(ctx.clock.now().getTime() - ctx.config.calendarSyncIntervalMs * 0.9));
  const ids = await repo.dueConnections(ctx.db, before, 200);
  let done = 0;
  for (let i = 0; i < ids.length; i += 4) {
    const results = await Promise.all(ids.slice(i, i + 4).map((id) => syncConnection(ctx, id)));
    done += results.filter(Boolean).length;
  }
  return done;
}
