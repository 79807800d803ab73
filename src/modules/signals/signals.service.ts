import { metricsOf } from '../metrics/index.js';
import type { AppContext } from '../../context.js';
import { flag } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { forbidden, invalidField } from '../../lib/errors.js';
import { recorded, type EffectRecorder } from '../../lib/idempotency.js';
import { fetchWindow, pageOf } from '../../lib/paging.js';
import { findIncident, openIncident, recordTimeline, type TimelineIncident } from '../incidents/index.js';
import { actorScope, targetOrg, targetOrgWrite } from '../orgs/index.js';
import { isMemberLocked } from '../orgs/index.js';
import { cachedUser } from '../users/index.js';
import { queueAlert } from './alert-reach.js';
import { CHANNELS } from '../../events/channels.js';
import { audit, deviceKeyOf } from './beacons.service.js';
import type { CreateSignalBody, ListSignalsQuery, Signal } from './signals.schemas.js';
import { insertSignal, listSignals as listRows, type SignalRow } from './signals.repository.js';

export const MAX_META_BYTES = 4096;
/** A reading may be replayed from an offline queue, but not dated in the future. */
const MAX_CLOCK_SKEW_MS = 60_000;

function toSignal(r: SignalRow): Signal {
  return {
    Id: r.id,
    type: r.type,
    user_id: r.user_id ?? 0,
    user_name: r.user_name ?? '',
    org_id: r.org_id,
    livemode: r.livemode === 1,
    lat: r.lat,
    lng: r.lng,
    accuracy: r.accuracy,
    note: r.note,
    image_url: r.image_url,
    ticket_id: r.ticket_id,
    meta: r.meta,
    created_at: r.created_at,
  };
}

/** Whether a meta's JSON passes MAX_META_BYTES as UTF-8 (a UTF-16 unit is at most 3 bytes: only a long text is counted). */
const tooLong = (json: string) => json.length * 3 > MAX_META_BYTES && Buffer.byteLength(json) > MAX_META_BYTES;

/** The rules a schema cannot say: an alert needs a note, meta is bounded, a reading is not from the future. */
function validate(ctx: AppContext, input: CreateSignalBody): { meta: string; at: Date } {
  if (input.type === 'alert' && !input.note?.trim()) throw invalidField('note', 'is required for an alert');
  const meta = JSON.stringify(input.meta ?? {});
  if (tooLong(meta)) throw invalidField('meta', `must be at most ${MAX_META_BYTES} bytes as JSON`);
  const now = ctx.clock.now();
  const at = input.recorded_at ? new Date(input.recorded_at) : now;
  if (at.getTime() > now.getTime() + MAX_CLOCK_SKEW_MS) throw invalidField('recorded_at', 'is in the future');
  return { meta, at };
}

/**
 * How a tracker device (modules/trackers) refuses its signal when its token was revoked meanwhile:
 * `check` synchronously right before a beacon changes the live state (nothing is awaited between),
 * `inTx` first in the transaction of a stored signal or of a beacon that turns the device on, so
 * the check and the write commit together.
 */
export interface SignalGuard {
  check(): void;
  inTx(tx: Tx): Promise<void>;
}

/**
 * Posts a signal into one of the caller's orgs. Beacons update the device's live state (turning
 * it on writes `beacon_on`) and are broadcast, never stored; other types are stored and broadcast;
 * an alert also tells every member of the org (alert-reach.ts: push, else email).
 */
export async function createSignal(ctx: AppContext, actor: Actor, input: CreateSignalBody, idem?: EffectRecorder | null, guard?: SignalGuard): Promise<Signal> {
  const { meta, at } = validate(ctx, input);
  // A beacon (the hot path: phones and trackers every few seconds) reads its org access and its
  // user from the credential cache; the other types read the org fresh.
  const org = input.type === 'beacon' ? { id: (await targetOrgWrite(ctx, actor, input.org_id)).orgId, name: '' } : (await targetOrg(ctx, actor, input.org_id)).org;
  const linked = input.ticket_id === undefined ? undefined : await findIncident(ctx.db, { orgIds: [org.id], mode: actor.mode }, input.ticket_id);
  if (input.ticket_id !== undefined && !linked) throw invalidField('ticket_id', 'is not an incident of this org');
  const user = await cachedUser(ctx, actor.userId);
  const now = iso(ctx.clock.now());
  const record: Signal = {
    Id: null,
    type: input.type,
    user_id: actor.userId,
    user_name: user?.name ?? '',
    org_id: org.id,
    livemode: actor.mode === 'live',
    lat: input.lat ?? null,
    lng: input.lng ?? null,
    accuracy: input.accuracy ?? null,
    note: input.note ?? null,
    image_url: input.image_url ?? null,
    ticket_id: input.ticket_id ?? null,
    // The object itself (JSON text or a tracker's flat values): the text was only for its size.
    meta: input.meta ?? {},
    created_at: iso(at),
  };
  const event = { channel: CHANNELS.signals, orgId: org.id, mode: actor.mode, type: `signal.${input.type}` as const };

  if (input.type === 'beacon') {
    const beacon = { orgId: org.id, lat: record.lat, lng: record.lng, accuracy: record.accuracy, meta: record.meta, metaJson: meta, at: record.created_at, now };
    const pending = recordBeacon(ctx, actor, beacon, user?.name ?? '', guard);
    if (pending) await pending;
    return idem ? ctx.transaction((tx) => recorded(tx, idem, record)) : record;
  }

  const type = input.type;
  return ctx.transaction(async (tx) => {
    if (guard) await guard.inTx(tx);
    // An alert without an incident opens one (same org and mode, in this transaction) and links to it.
    const opened = input.type === 'alert' && input.ticket_id === undefined ? await openIncident(ctx, tx, actor, org.id, alertIncident(record)) : undefined;
    if (opened) record.ticket_id = opened.id;
    const id = await insertSignal(tx.db, {
      org_id: org.id,
      livemode: flag(actor.mode === 'live'),
      user_id: actor.userId,
      type,
      lat: record.lat,
      lng: record.lng,
      accuracy: record.accuracy,
      note: record.note,
      image_url: record.image_url,
      ticket_id: record.ticket_id,
      meta,
      created_at: record.created_at,
    });
    const stored = { ...record, Id: id };
    ctx.events.publish(tx, { ...event, payload: stored });
    if (stored.ticket_id !== null) await recordSignal(ctx, tx, stored, opened ?? linked!);
    if (input.type === 'alert') await queueAlert(ctx, tx, stored, org, actor.mode);
    return recorded(tx, idem, stored);
  });
}

/** A beacon ready for the live state: its org checked, its meta serialised, its times as ISO text. */
export interface BeaconInput {
  orgId: number;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  /** The meta object (broadcast) and its JSON (kept in the state; measured against MAX_META_BYTES). */
  meta: Record<string, unknown>;
  metaJson: string;
  /** When the position was taken (created_at) and when it was heard (last_seen_at). */
  at: string;
  now: string;
}

/**
 * A beacon writes nothing unless it turns its device on: the store keeps the position (in memory,
 * flushed in batches, or in Redis) and the `signal.beacon` event goes out at once. Shared by
 * POST /v1/signals and the tracker protocols (which build a BeaconInput without a generic signal).
 */
function recordBeacon(ctx: AppContext, actor: Actor, b: BeaconInput, userName: string, guard?: SignalGuard): Promise<void> | undefined {
  const deviceId = (b.meta.device_id as string | undefined) ?? null;
  const { orgId } = b;
  const key = { mode: actor.mode, userId: actor.userId, deviceKey: deviceKeyOf(deviceId) };
  const ping = { orgId, deviceId, lat: b.lat, lng: b.lng, accuracy: b.accuracy, meta: b.metaJson, positionAt: b.at, now: b.now };
  // Written out (no spread): the payload's keys in the order the stream has always sent them.
  const beaconEvent = {
    channel: CHANNELS.signals,
    orgId,
    mode: actor.mode,
    type: 'signal.beacon' as const,
    payload: { user_id: actor.userId, lat: b.lat, lng: b.lng, accuracy: b.accuracy, meta: b.meta, created_at: b.at, user_name: userName, org_id: orgId },
  };
  const store = ctx.beacons;
  const observe = () => {
    if (ctx.positions.size > 0 && b.lat !== null && b.lng !== null) {
      ctx.positions.observe(ctx, { orgId, mode: actor.mode, userId: actor.userId, deviceId, lat: b.lat, lng: b.lng, accuracy: b.accuracy, at: b.at });
    }
  };
  // A device that is on changes in memory at once, with no promise (undefined is returned); a
  // turn-on, or a store that cannot answer synchronously (Redis), goes the long way.
  const done = store.pingActive?.(key, ping, guard);
  if (done) {
    metricsOf(ctx).beacons.inc();
    if (done.moved) ctx.events.bus.publish(beaconEvent);
    observe();
    return undefined;
  }
  return store
    .recordPing(ctx.db, key, ping, {
      ...(guard ? { check: () => guard.check() } : {}),
      onTurnOn: async (tx) => {
        if (guard) await guard.inTx(tx);
        // The org access read before this may predate a removal: a removed member's device stays off.
        if (!(await isMemberLocked(tx.db, ctx.database.dialect === 'postgres', orgId, actor.userId))) throw forbidden();
        await audit(ctx, tx, { org_id: orgId, user_id: actor.userId, device_id: deviceId }, actor.mode, 'beacon_on', { lat: b.lat, lng: b.lng });
        ctx.events.publish(tx, beaconEvent);
      },
    })
    .then(({ turnedOn, moved }) => {
      metricsOf(ctx).beacons.inc();
      if (moved && !turnedOn) ctx.events.bus.publish(beaconEvent);
      observe();
    });
}

/**
 * A beacon of a tracker device (modules/trackers): the rules of POST /v1/signals for a beacon whose
 * fields are already known good (a position in range, a time not in the future, a flat meta), so
 * nothing is validated twice: the meta's size, then the org (write access, from the credential
 * cache) and the owner's name, in createSignal's order.
 */
export async function postBeacon(ctx: AppContext, actor: Actor, orgId: number, b: Omit<BeaconInput, 'orgId' | 'metaJson'>, guard?: SignalGuard): Promise<void> {
  const metaJson = JSON.stringify(b.meta);
  if (tooLong(metaJson)) throw invalidField('meta', `must be at most ${MAX_META_BYTES} bytes as JSON`);
  const write = await targetOrgWrite(ctx, actor, orgId);
  const user = await cachedUser(ctx, actor.userId);
  const pending = recordBeacon(ctx, actor, { orgId: write.orgId, lat: b.lat, lng: b.lng, accuracy: b.accuracy, meta: b.meta, metaJson, at: b.at, now: b.now }, user?.name ?? '', guard);
  if (pending) await pending;
}

/** The incident an alert opens: urgent, from the note's first line, where the alert was raised. */
function alertIncident(s: Signal) {
  const note = (s.note ?? '').trim();
  const title = note.split('\n', 1)[0]!.trim().slice(0, 200);
  return {
    title,
    description: note,
    priority: 'urgent' as const,
    source: 'alert' as const,
    ...(s.lat !== null ? { lat: s.lat } : {}),
    ...(s.lng !== null ? { lng: s.lng } : {}),
  };
}

/** A stored signal linked to an incident is a `signal` event on its timeline, with its position and image. */
async function recordSignal(ctx: AppContext, tx: Tx, s: Signal & { Id: number }, incident: TimelineIncident, actorId: number | null = s.user_id): Promise<void> {
  await recordTimeline(ctx, tx, incident, 'signal', actorId, {
    signal_id: s.Id,
    signal_type: s.type,
    note: s.note,
    lat: s.lat,
    lng: s.lng,
    accuracy: s.accuracy,
    image_url: s.image_url,
  });
}

/**
 * A photo that reached an incident from outside the API (an image attached to a mail, issue 32):
 * stored as a capture linked to the incident, broadcast as `signal.capture` and put on the
 * incident's timeline, as POST /v1/signals does with a capture and `ticket_id`. No user is behind
 * it: `user_id` 0 and `user_name` '' as GET /v1/signals shows such a signal.
 */
export async function attachCapture(ctx: AppContext, tx: Tx, incident: TimelineIncident, c: { imageUrl: string; note: string | null; meta: Record<string, unknown> }): Promise<number> {
  const common = { type: 'capture' as const, org_id: incident.org_id, lat: null, lng: null, accuracy: null, note: c.note, image_url: c.imageUrl, ticket_id: incident.id, created_at: iso(ctx.clock.now()) };
  const id = await insertSignal(tx.db, { ...common, livemode: incident.livemode, user_id: null, meta: JSON.stringify(c.meta) });
  const stored: Signal & { Id: number } = { ...common, Id: id, user_id: 0, user_name: '', livemode: incident.livemode === 1, meta: c.meta };
  ctx.events.publish(tx, { channel: CHANNELS.signals, orgId: incident.org_id, mode: incident.livemode === 1 ? 'live' : 'test', type: 'signal.capture', payload: stored });
  await recordSignal(ctx, tx, stored, incident, null);
  return id;
}

export async function listSignals(ctx: AppContext, actor: Actor, q: ListSignalsQuery) {
  const w = fetchWindow(q);
  const scope = await actorScope(ctx, actor, q.org_id);
  // A beacon is a signal type but never stored, so its list is empty (not a 422).
  const rows = q.type === 'beacon' ? [] : await listRows(ctx.db, scope, q.type, w.limit, w.offset);
  const { items, ...page } = pageOf(rows, q, toSignal);
  return { signals: items, ...page };
}
