// Events other features keep in a user's CalDAV write calendar (on-call shifts, issue #35), as
// bookings are kept (writes.ts): each event is a `calendar_objects` row holding what it should be
// now (its iCalendar text, or deleted), and each change queues a `calendar` delivery that reads the
// row when it runs, so a retry or a late delivery always leaves the calendar as the row is.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { iso } from '../../lib/clock.js';
import { queueDeliveries } from '../deliveries/index.js';
import type { OutboxRow } from '../deliveries/index.js';
import type { SendResult } from '../deliveries/index.js';
import { findConnection, writeConnectionOf } from './calendars.repository.js';
import { deleteEvent, putEvent } from './dav.js';
import { davOptions } from './sync.service.js';
import { eventUrl, writeError } from './writes.js';

export interface CalendarObject {
  /** Unique within the source, stable across changes of the event. */
  uid: string;
  /** The calendar object resource (VCALENDAR with one VEVENT, no METHOD). */
  ics: string;
  /** ISO end of the event. */
  end: string;
}

export interface ObjectWrite {
  connection_id: number;
  object_id: number;
}

export const isObjectWrite = (p: object): p is ObjectWrite => 'object_id' in p;

/** Users who chose a write calendar: whose calendars other features may keep events in. */
export async function usersWithWriteCalendar(db: Kysely<DB>): Promise<number[]> {
  // On-call shifts are live: only live connections receive them (issue #31, F3).
  const rows = await db.selectFrom('calendar_connections').select('user_id').distinct().where('write_calendar', 'is not', null).where('livemode', '=', 1).orderBy('user_id').execute();
  return rows.map((r) => r.user_id);
}

/**
 * Makes the user's write calendar hold exactly `objects` among the events of `source` that end
 * after `since`: new and changed ones are written, ones no longer there deleted; events that ended
 * before `since` are left as they are (the past stays in the calendar). Answers how many writes it queued.
 */
export async function syncCalendarObjects(ctx: AppContext, tx: Tx, userId: number, source: string, since: string, objects: readonly CalendarObject[]): Promise<number> {
  // Shifts are live data: never written to a calendar a test key connected (issue #31, F3).
  const conn = await writeConnectionOf(tx.db, userId, 'live');
  if (!conn?.write_calendar) return 0;
  const now = iso(ctx.clock.now());
  const rows = await tx.db.selectFrom('calendar_objects').selectAll().where('connection_id', '=', conn.id).where('source', '=', source).where('ends_at', '>', since).execute();
  const held = new Map(rows.map((r) => [r.uid, r]));
  const changed: { id: number; url: string }[] = [];
  for (const o of objects) {
    const r = held.get(o.uid);
    held.delete(o.uid);
    if (r && r.wanted === 1 && r.ics === o.ics) continue;
    const values = { ics: o.ics, wanted: 1 as const, ends_at: o.end, updated_at: now, url: eventUrl(conn.write_calendar, o.uid.replace(/@.*$/, '')) };
    const row = await tx.db
      .insertInto('calendar_objects')
      .values({ connection_id: conn.id, user_id: userId, source, uid: o.uid, ...values })
      .onConflict((oc) => oc.columns(['connection_id', 'uid']).doUpdateSet(values))
      .returning('id')
      .executeTakeFirstOrThrow();
    changed.push({ id: row.id, url: values.url });
  }
  for (const r of held.values()) {
    if (r.wanted === 0) continue;
    await tx.db.updateTable('calendar_objects').set({ wanted: 0, updated_at: now }).where('id', '=', r.id).execute();
    changed.push({ id: r.id, url: r.url });
  }
  if (changed.length > 0) {
    const topic = `${source}.calendar`;
    await queueDeliveries(
      ctx,
      tx,
      changed.map((c) => ({ kind: 'calendar' as const, topic, recipient: c.url, payload: { connection_id: conn.id, object_id: c.id } satisfies ObjectWrite, mode: 'live' as const, userId })),
    );
  }
  return changed.length;
}

/** The sender's part for an object: PUT while wanted, DELETE (then forget the row) once not. */
export async function sendObject(ctx: AppContext, row: OutboxRow, p: ObjectWrite): Promise<SendResult> {
  const conn = await findConnection(ctx.db, p.connection_id);
  if (!conn) return { outcome: 'skipped', note: 'the calendar connection was removed' };
  const obj = await ctx.db.selectFrom('calendar_objects').selectAll().where('id', '=', p.object_id).executeTakeFirst();
  if (!obj) return { outcome: 'skipped', note: 'the event is no longer kept' };
  try {
    const o = davOptions(ctx, conn);
    if (obj.wanted === 1) return { outcome: 'sent', statusCode: await putEvent(obj.url, obj.ics, o) };
    const statusCode = await deleteEvent(obj.url, o);
    await ctx.db.deleteFrom('calendar_objects').where('id', '=', obj.id).where('wanted', '=', 0).where('updated_at', '=', obj.updated_at).execute();
    return { outcome: 'sent', statusCode };
  } catch (err) {
    throw writeError(ctx, err);
  }
}
