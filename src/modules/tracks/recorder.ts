import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { flag } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { EventBus } from '../../events/bus.js';
import { findTracksDays, RETENTION_CHANGED } from '../orgs/index.js';
import type { ObservedFix } from '../signals/index.js';
import * as repo from './tracks.repository.js';
import type { TrackRow } from './tracks.repository.js';

/** Positions held at most while the database does not take them (the oldest go first). */
const MAX_BUFFERED = 500_000;
/** Staged positions moved per transaction: a move of a minute of a large fleet holds the write lock in slices. */
const MOVE_SLICE = 50_000;

export interface TrackRecorderOptions {
  db: Kysely<DB>;
  /** The app's transactions (the moves of staged positions run in one each). */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  bus: EventBus;
  log: FastifyBaseLogger;
  flushMs: number;
  /** How often the staged positions move to the track (`TRACK_MOVE_MS`). */
  moveMs: number;
}

/**
 * Keeps the tracks of the orgs that opted in (`retention.tracks_days` > 0), one per instance
 * (context.ts registers `observe` as a position observer of `ctx.positions`).
 *
 * - Which orgs keep tracks is held in memory: loaded at start, and read again for an org when its
 *   retention changes (the `retention.changed` event of the bus, which reaches every instance).
 * - `observe` only appends to a buffer (nothing is awaited on the beacon path). Every `flushMs` one
 *   multi-row insert appends the buffer to `track_staging` (no transaction per fix, no index to
 *   keep but the id); a stop flushes. A crash loses at most the positions of the last flush
 *   interval, as with the beacons' last positions.
 * - Every `moveMs` (`move`) the staged positions move to `position_tracks`, sorted by its index by
 *   device, so a device's positions of the interval land together (docs/trackers.md, "What it
 *   costs"). Any instance moves any staged row, once (tracks.repository.ts, moveStaged): the rows a
 *   crashed instance staged move with the next move of any instance. Reads take both tables.
 */
export function createTrackRecorder(o: TrackRecorderOptions) {
  const days = new Map<number, number>();
  let loaded = false;
  let buffer: TrackRow[] = [];
  let flushing: Promise<void> | undefined;
  let moving: Promise<number> | undefined;
  let closed = false;

  const ready = repo
    .orgsKeepingTracks(o.db)
    .then((rows) => {
      for (const r of rows) if (!days.has(r.org_id)) days.set(r.org_id, r.tracks_days);
      loaded = true;
    })
    .catch((err: unknown) => {
      loaded = true;
      o.log.error({ err }, 'loading the orgs that keep tracks failed');
    });

  const setDays = (orgId: number, d: number) => (d > 0 ? days.set(orgId, d) : days.delete(orgId));
  const unsubscribe = o.bus.subscribe((e) => {
    if (e.channel !== RETENTION_CHANGED.channel || e.type !== RETENTION_CHANGED.type) return;
    const given = (e.payload as { tracks_days?: unknown } | undefined)?.tracks_days;
    if (typeof given === 'number') setDays(e.orgId, given);
    // From another instance the payload may not travel (only its text): the database says.
    findTracksDays(o.db, e.orgId).then(
      (d) => setDays(e.orgId, d),
      (err: unknown) => o.log.warn({ err }, 'reading an org’s tracks setting failed'),
    );
  });

  function observe(fix: ObservedFix): void {
    // Before the orgs are loaded every position waits in the buffer; the flush keeps the right ones.
    if (loaded && !days.has(fix.orgId)) return;
    if (buffer.length >= MAX_BUFFERED) buffer.shift();
    buffer.push({
      org_id: fix.orgId,
      livemode: flag(fix.mode === 'live'),
      user_id: fix.userId,
      device_id: fix.deviceId ?? 'user',
      lat: fix.lat,
      lng: fix.lng,
      accuracy: fix.accuracy,
      recorded_at: fix.at,
    });
  }

  async function flush(): Promise<void> {
    while (flushing) await flushing;
    await ready;
    if (buffer.length === 0) return;
    const rows = buffer.filter((r) => days.has(r.org_id));
    buffer = [];
    if (rows.length === 0) return;
    flushing = repo
      .appendPositions(o.db, rows)
      // A person or org deleted since (another instance, too): their positions go with them.
      .catch(async (err: unknown) => {
        const kept = await repo.stillKnown(o.db, rows);
        if (kept.length === rows.length) throw err;
        await repo.appendPositions(o.db, kept);
      })
      .catch((err: unknown) => {
        buffer = rows.concat(buffer).slice(-MAX_BUFFERED);
        o.log.error({ err, positions: rows.length }, 'track positions not written; retried at the next flush');
      })
      .finally(() => (flushing = undefined));
    await flushing;
  }

  /** Moves what is staged now to the track, in slices of MOVE_SLICE ids; answers how many moved. */
  async function moveOnce(): Promise<number> {
    const staged = await repo.stagedIds(o.db);
    if (!staged) return 0;
    let moved = 0;
    for (let from = staged.min; from <= staged.max; from += MOVE_SLICE) {
      const upTo = Math.min(from + MOVE_SLICE - 1, staged.max);
      moved += await o.transaction((tx) => repo.moveStaged(tx.db, upTo));
    }
    return moved;
  }

  async function move(): Promise<number> {
    while (moving) await moving;
    moving = moveOnce()
      .catch((err: unknown) => {
        o.log.error({ err }, 'staged track positions not moved; moved at the next move');
        return 0;
      })
      .finally(() => (moving = undefined));
    return moving;
  }

  const timer = setInterval(() => void flush(), o.flushMs);
  timer.unref();
  const moveTimer = setInterval(() => void move(), o.moveMs);
  moveTimer.unref();

  return {
    observe,
    flush,
    move,
    ready: () => ready,
    /** Whether the org keeps tracks, as this instance knows it. */
    keeps: (orgId: number) => days.has(orgId),
    buffered: () => buffer.length,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      clearInterval(moveTimer);
      unsubscribe();
      await flush();
      await move();
    },
  };
}
export type TrackRecorder = ReturnType<typeof createTrackRecorder>;
