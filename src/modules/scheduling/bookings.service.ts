import { randomInt } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { flag, type BookingStatus, type Mode } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { DAY, iso } from '../../lib/clock.js';
import { randomToken } from '../../lib/crypto.js';
import { fetchWindow, pageOf } from '../../lib/paging.js';
import { conflict, notFound, slotUnavailable } from '../../lib/errors.js';
import { recorded, type EffectRecorder } from '../../lib/idempotency.js';
import { visitorLanguage } from '../../lib/language.js';
import { signToken, verifyToken } from '../../lib/signing.js';
import type { Slot } from './availability.js';
import { queueBookingNotices, type BookingEvent } from './booking-notices.js';
import { lockUsers } from '../../db/locks.js';
import * as repo from './bookings.repository.js';
import type { BookingRow } from './bookings.repository.js';
import { findEventType } from './event-types.repository.js';
import { assertBookable, slotsFor, type Bookable } from './slots.service.js';

export interface BookingInput {
  attendee_name: string;
  attendee_email: string;
  start_time: string;
  timezone?: string | undefined;
  notes?: string | undefined;
  /** BCP 47; checked here (422 `language`), else `acceptLanguage` decides. */
  language?: string | undefined;
}

export function linksOf(ctx: AppContext, id: string) {
  const manage = signToken(ctx.secret, 'manage', id);
  const confirm = signToken(ctx.secret, 'confirm', id);
  return {
    cancel_url: `${ctx.config.publicUrl}/bookings/manage/${manage}?action=cancel`,
    reschedule_url: `${ctx.config.publicUrl}/bookings/manage/${manage}?action=reschedule`,
    confirm_url: `${ctx.config.publicUrl}/v1/bookings/${confirm}/confirm`,
    decline_url: `${ctx.config.publicUrl}/v1/bookings/${confirm}/decline`,
  };
}

export function toBooking(ctx: AppContext, b: BookingRow) {
  const { cancel_url, reschedule_url } = linksOf(ctx, b.id);
  return {
    id: b.id,
    status: b.status,
    event_type_id: b.event_type_id,
    host_id: b.host_id,
    attendee_name: b.attendee_name,
    attendee_email: b.attendee_email,
    start_time: b.start_time,
    end_time: b.end_time,
    notes: b.notes,
    timezone: b.timezone,
    language: b.language,
    requires_confirmation: b.requires_confirmation === 1,
    cancel_url,
    reschedule_url,
    livemode: b.livemode === 1,
    created_at: b.created_at,
    cancel_reason: b.cancel_reason,
  };
}
export type Booking = ReturnType<typeof toBooking>;

/** The slot starting exactly at `start`, if availability would offer it now; found under the hosts' lock. */
async function findSlot(ctx: AppContext, db: Parameters<typeof slotsFor>[1], b: Bookable, start: number, excludeId?: string): Promise<Slot | undefined> {
  if (!Number.isFinite(start)) return undefined;
  const date = new Date(start).toISOString().slice(0, 10);
  return (await slotsFor(ctx, db, b, date, 'UTC', excludeId)).find((s) => s.start === start);
}

/** round_robin: the free host whose last booking of the team is oldest (never booked first); random: any free host. */
async function pickHost(ctx: AppContext, db: Parameters<typeof slotsFor>[1], b: Bookable, free: number[]): Promise<number> {
  if (b.et.team_id === null || free.length === 1) return free[0]!;
  const routing = await db.selectFrom('teams').select('routing').where('id', '=', b.et.team_id).executeTakeFirstOrThrow();
  if (routing.routing === 'random') return free[randomInt(free.length)]!;
  const last = await repo.lastTeamBookings(db, b.et.team_id);
  // Oldest last booking first; bookings made in the same millisecond tie, and then the host with
  // fewer team bookings goes first; free hosts come in join order, which settles the rest.
  const key = (h: number) => last.get(h) ?? { last: '', count: 0 };
  return [...free].sort((x, y) => key(x).last.localeCompare(key(y).last) || key(x).count - key(y).count)[0]!;
}

/**
 * Books a slot. The hosts are locked, the slot is computed again and the booking inserted in one
 * transaction, so however many requests race for one slot, the database lets exactly one in;
 * any start that availability would not offer now is 409 slot_unavailable.
 */
export async function createBooking(ctx: AppContext, b: Bookable, input: BookingInput, mode: Mode, idem?: EffectRecorder | null, acceptLanguage?: string | string[]): Promise<Booking> {
  const language = visitorLanguage(input.language, acceptLanguage);
  assertBookable(b);
  const start = Date.parse(input.start_time);
  const now = iso(ctx.clock.now());
  return ctx.transaction(async (tx) => {
    await lockUsers(tx.db, ctx.database.dialect, b.hostIds);
    const slot = await findSlot(ctx, tx.db, b, start);
    if (!slot) throw slotUnavailable();
    const hostId = await pickHost(ctx, tx.db, b, slot.hostIds);
    const status: BookingStatus = b.et.requires_confirmation === 1 ? 'pending' : 'confirmed';
    const row: BookingRow = {
      id: `bk_${randomToken(16)}`,
      event_type_id: b.et.id,
      host_id: hostId,
      team_id: b.et.team_id,
      org_id: b.et.org_id,
      livemode: flag(mode === 'live'),
      status,
      attendee_name: input.attendee_name.trim(),
      attendee_email: input.attendee_email.trim().toLowerCase(),
      start_time: iso(new Date(slot.start)),
      end_time: iso(new Date(slot.end)),
      buffer_before_minutes: b.et.buffer_before_minutes,
      buffer_after_minutes: b.et.buffer_after_minutes,
      notes: input.notes ?? null,
      timezone: input.timezone ?? 'UTC',
      language,
      requires_confirmation: b.et.requires_confirmation,
      cancel_reason: null,
      created_at: now,
      updated_at: now,
    };
    await repo.insertBooking(tx.db, row);
    const view = toBooking(ctx, row);
    await queueBookingNotices(ctx, tx, 'booking.created', row, b.et, linksOf(ctx, row.id), view);
    return recorded(tx, idem, view);
  });
}

/** Applies a status change allowed from `from`; a repeat of the same change is answered as done (idempotent). */
async function changeStatus(ctx: AppContext, id: string, to: BookingStatus, from: BookingStatus[], event: BookingEvent, reason?: string): Promise<Booking> {
  return ctx.transaction(async (tx) => {
    const before = await repo.findBooking(tx.db, id);
    if (!before) throw notFound();
    if (before.status === to) return toBooking(ctx, before);
    const after = await repo.transition(tx.db, id, from, { status: to, updated_at: iso(ctx.clock.now()), ...(reason ? { cancel_reason: reason } : {}) });
    if (!after) throw conflict(`The booking is ${before.status}`);
    const et = after.event_type_id === null ? undefined : await findEventType(tx.db, after.event_type_id);
    const view = toBooking(ctx, after);
    await queueBookingNotices(ctx, tx, event, after, et, linksOf(ctx, id), view);
    return view;
  });
}

/** Moves a booking to a new start, keeping its id, status and host; 409 when the host is not free then. */
async function moveBooking(ctx: AppContext, before: BookingRow, startTime: string, reason: string | undefined): Promise<Booking> {
  if (before.status !== 'confirmed' && before.status !== 'pending') throw conflict(`The booking is ${before.status}`);
  const et = before.event_type_id === null ? undefined : await findEventType(ctx.db, before.event_type_id);
  if (!et) throw conflict('The event type of this booking no longer exists');
  const b: Bookable = { et, hostIds: [before.host_id], locked: false };
  return ctx.transaction(async (tx) => {
    await lockUsers(tx.db, ctx.database.dialect, b.hostIds);
    const slot = await findSlot(ctx, tx.db, b, Date.parse(startTime), before.id);
    if (!slot) throw slotUnavailable();
    const after = await repo.updateBooking(tx.db, before.id, {
      start_time: iso(new Date(slot.start)),
      end_time: iso(new Date(slot.end)),
      updated_at: iso(ctx.clock.now()),
    });
    const view = toBooking(ctx, after);
    await queueBookingNotices(ctx, tx, 'booking.rescheduled', after, et, linksOf(ctx, after.id), { ...view, reason: reason ?? null });
    return view;
  });
}

/** A booking of the caller as host, in the caller's mode; anything else is 404. */
async function hostBooking(ctx: AppContext, actor: Actor, id: string): Promise<BookingRow> {
  const b = await repo.findBooking(ctx.db, id);
  if (!b || b.host_id !== actor.userId || b.livemode !== flag(actor.mode === 'live')) throw notFound();
  return b;
}

export async function cancelAsHost(ctx: AppContext, actor: Actor, id: string, reason?: string) {
  await hostBooking(ctx, actor, id);
  const b = await changeStatus(ctx, id, 'cancelled', ['confirmed', 'pending'], 'booking.cancelled', reason);
  return { id: b.id, status: b.status };
}

export async function rescheduleAsHost(ctx: AppContext, actor: Actor, id: string, startTime: string, reason?: string) {
  return moveBooking(ctx, await hostBooking(ctx, actor, id), startTime, reason);
}

export async function listBookings(ctx: AppContext, actor: Actor, f: repo.BookingFilter & { limit: number; page: number }) {
  // Stored times are ISO text in UTC with milliseconds; any other RFC 3339 spelling would compare wrongly as text.
  // A bare day means all of it (UTC): `from` at its start, `to` up to its end (the next day's start).
  const at = (t: string | undefined, endOfDay: boolean) => {
    if (t === undefined) return undefined;
    const day = t.length === 10;
    return iso(new Date(Date.parse(day ? `${t}T00:00:00Z` : t) + (day && endOfDay ? DAY : 0)));
  };
  const filter = { ...f, from: at(f.from, false), to: at(f.to, true) };
  const w = fetchWindow(f);
  const rows = await repo.listHostBookings(ctx.db, actor.userId, flag(actor.mode === 'live'), filter, w.limit, w.offset);
  const { items, ...page } = pageOf(rows, f, (r) => toBooking(ctx, r));
  return { bookings: items, ...page };
}

/** The booking a public token was made for, or 404 (a forged or foreign token names nothing). */
async function byToken(ctx: AppContext, purpose: 'manage' | 'confirm', token: string): Promise<BookingRow> {
  const id = verifyToken(ctx.secret, purpose, token);
  const b = id ? await repo.findBooking(ctx.db, id) : undefined;
  if (!b) throw notFound();
  return b;
}

export async function confirmByToken(ctx: AppContext, token: string, decision: 'confirm' | 'decline'): Promise<Booking> {
  const b = await byToken(ctx, 'confirm', token);
  return decision === 'confirm'
    ? changeStatus(ctx, b.id, 'confirmed', ['pending'], 'booking.confirmed')
    : changeStatus(ctx, b.id, 'declined', ['pending'], 'booking.declined');
}

export const manageView = async (ctx: AppContext, token: string) => toBooking(ctx, await byToken(ctx, 'manage', token));
export const manageViewByConfirmToken = async (ctx: AppContext, token: string) => toBooking(ctx, await byToken(ctx, 'confirm', token));

export async function cancelByToken(ctx: AppContext, token: string, reason?: string) {
  const b = await byToken(ctx, 'manage', token);
  return changeStatus(ctx, b.id, 'cancelled', ['confirmed', 'pending'], 'booking.cancelled', reason);
}

export async function rescheduleByToken(ctx: AppContext, token: string, startTime: string, reason?: string) {
  return moveBooking(ctx, await byToken(ctx, 'manage', token), startTime, reason);
}

