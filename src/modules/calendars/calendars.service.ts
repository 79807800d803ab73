import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { flag } from '../../db/schema.js';
import { DAY, iso } from '../../lib/clock.js';
import { invalidField, notFound } from '../../lib/errors.js';
import * as repo from './calendars.repository.js';
import type { ConnectionRow } from './calendars.repository.js';
import type { CreateCalendarBody, UpdateCalendarBody } from './calendars.schemas.js';
import { seal } from './secret-box.js';
import { busyUrls, syncConnection } from './sync.service.js';

/** A connection as its owner sees it: never the password. */
export function toCalendar(ctx: AppContext, r: ConnectionRow) {
  const items = r.calendars.items ?? [];
  const busy = new Set(busyUrls(r, items));
  const failingLong = r.failing_since !== null && ctx.clock.now().getTime() - Date.parse(r.failing_since) >= DAY;
  return {
    id: r.id,
    kind: r.kind,
    name: r.name,
    url: r.url,
    username: r.username,
    livemode: r.livemode === 1,
    status: r.status,
    error: r.error,
    halted: r.halted_at !== null,
    failing_since: r.failing_since,
    warning: failingLong ? `This calendar could not be read since ${r.failing_since}: its busy times may be out of date.` : null,
    last_synced_at: r.last_synced_at,
    busy_count: r.busy_count,
    calendars: items.map((c) => ({ url: c.url, name: c.name, busy: busy.has(c.url), write: c.url === r.write_calendar })),
    busy_calendars: r.busy_calendars,
    write_calendar: r.write_calendar,
    created_at: r.created_at,
  };
}

/** The caller's connection in the caller's mode; another user's or the other mode's answers 404. */
async function owned(ctx: AppContext, actor: Actor, id: number): Promise<ConnectionRow> {
  const r = await repo.findConnection(ctx.db, id, actor);
  if (!r) throw notFound();
  return r;
}

/** Adds a connection and reads it at once, so the answer already says whether it works. */
/** webcal:// is https://; what follows the scheme (checked by the schema) must parse as a URL too (a 422, not a 500). */
function feedUrl(raw: string): string {
  const url = raw.replace(/^webcal:/i, 'https:');
  if (!URL.canParse(url)) throw invalidField('url', 'is not a valid URL');
  return url;
}

export async function createCalendar(ctx: AppContext, actor: Actor, input: CreateCalendarBody) {
  const url = feedUrl(input.url);
  if (input.password !== undefined && input.username === undefined) throw invalidField('username', 'is required with a password');
  const now = iso(ctx.clock.now());
  const row = await repo.insertConnection(ctx.db, {
    user_id: actor.userId,
    livemode: flag(actor.mode === 'live'),
    kind: input.kind,
    name: input.name?.trim() ?? new URL(url).hostname,
    url,
    username: input.username ?? null,
    secret: input.password !== undefined ? seal(ctx.secret, input.password) : null,
    calendars: {},
    busy_calendars: null,
    write_calendar: null,
    etag: null,
    status: 'pending',
    error: null,
    failing_since: null,
    busy_count: 0,
    last_synced_at: null,
    refreshed_at: null,
    sync_lease_until: null,
    halted_at: null,
    created_at: now,
    updated_at: now,
  });
  await syncConnection(ctx, row.id);
  return toCalendar(ctx, await owned(ctx, actor, row.id));
}

export async function listCalendars(ctx: AppContext, actor: Actor) {
  return { calendars: (await repo.listConnections(ctx.db, actor)).map((r) => toCalendar(ctx, r)) };
}

export const getCalendar = async (ctx: AppContext, actor: Actor, id: number) => toCalendar(ctx, await owned(ctx, actor, id));

/**
 * Renames; changes the address or credentials; or picks which discovered calendars count as busy
 * and which receives bookings. Any change to what is read is read at once, and lifts a halt (a
 * calendar refused over a safety limit is read again once its owner changed it).
 */
export async function updateCalendar(ctx: AppContext, actor: Actor, id: number, input: UpdateCalendarBody) {
  const r = await owned(ctx, actor, id);
  const known = new Set((r.calendars.items ?? []).map((c) => c.url));
  const patch: Partial<ConnectionRow> = { updated_at: iso(ctx.clock.now()) };
  if (input.name !== undefined) patch.name = input.name.trim();
  if (input.busy_calendars !== undefined || input.write_calendar !== undefined) {
    const field = input.busy_calendars !== undefined ? 'busy_calendars' : 'write_calendar';
    if (r.kind !== 'caldav') throw invalidField(field, 'applies to CalDAV connections only');
    if (input.url !== undefined) throw invalidField(field, 'cannot be picked in the same change as a new url (the calendars are discovered again)');
  }
  if (input.url !== undefined) {
    // Another address: what was learnt from the old one goes.
    Object.assign(patch, { url: feedUrl(input.url), etag: null, calendars: {}, busy_calendars: null, write_calendar: null, refreshed_at: null });
  }
  if (input.username !== undefined) Object.assign(patch, { username: input.username, refreshed_at: null });
  if (input.password !== undefined) {
    if ((input.username ?? r.username) === null) throw invalidField('username', 'is required with a password');
    Object.assign(patch, { secret: seal(ctx.secret, input.password), refreshed_at: null });
  }
  if (input.busy_calendars !== undefined) {
    const bad = input.busy_calendars.findIndex((u) => !known.has(u));
    if (bad >= 0) throw invalidField(`busy_calendars/${bad}`, 'must be one of the discovered calendars');
    patch.busy_calendars = [...new Set(input.busy_calendars)];
    patch.refreshed_at = null; // read the new set in full at once
  }
  if (input.write_calendar !== undefined) {
    if (input.write_calendar !== null && !known.has(input.write_calendar)) throw invalidField('write_calendar', 'must be one of the discovered calendars');
    patch.write_calendar = input.write_calendar;
  }
  await repo.updateConnection(ctx.db, id, patch);
  if (patch.refreshed_at === null) await syncConnection(ctx, id, { resume: true });
  return toCalendar(ctx, await owned(ctx, actor, id));
}

export async function deleteCalendar(ctx: AppContext, actor: Actor, id: number) {
  if (!(await repo.deleteConnection(ctx.db, id, actor))) throw notFound();
  return { id, deleted: true };
}

/** Syncs now (a sync already under way for this connection is not started twice); lifts a halt. */
export async function syncNow(ctx: AppContext, actor: Actor, id: number) {
  await owned(ctx, actor, id);
  await syncConnection(ctx, id, { resume: true });
  return toCalendar(ctx, await owned(ctx, actor, id));
}

/** What the caller's calendars contribute to their busy time between two instants (the dashboard's week view). */
export async function busyTimes(ctx: AppContext, actor: Actor, q: { from: string; to: string }) {
  const from = Date.parse(q.from);
  const to = Date.parse(q.to);
  if (!(to > from)) throw invalidField('to', 'must be after from');
  if (to - from > 62 * DAY) throw invalidField('to', 'at most 62 days after from');
  const rows = await repo.busyOfUser(ctx.db, actor, iso(new Date(from)), iso(new Date(to)));
  return { busy: rows.map((r) => ({ calendar_id: r.connection_id, start_time: r.start_time, end_time: r.end_time })) };
}
