// Arrival and departure from position (issue #38, docs/dispatch.md "Arrival and departure"): when
// the assignee's live position (any of their devices: the beacon path hands every accepted fix to
// ctx.positions) comes within an open incident's arrival radius, `on_scene {source: "position"}` is
// recorded as the tap would (acknowledging it if nobody had); when it is later farther than the
// radius plus the fix's accuracy, `departed`. A fix less accurate than the radius decides nothing.
//
// The check is in memory: a per-instance cache of user -> their open assigned incidents with a
// position (and the radius, and where they stand), read once per user at their first fix, then kept
// current from the incident events on the bus (created, updated, assigned: each carries the whole
// incident). A transition is claimed by a conditional write on `incident_presence` (one row per
// incident and user), in the transaction that records it, so it happens once across instances.
import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { EventBus, LiveEvent } from '../../events/bus.js';
import { CHANNELS } from '../../events/channels.js';
import { iso } from '../../lib/clock.js';
import type { Incident } from '../incidents/index.js';
import type { ObservedFix } from '../signals/index.js';
import { recordProgress } from './acknowledge.js';
import { haversineM } from './geo.js';
import { assignedOpen, claimPresence } from './arrival.repository.js';

type Presence = 'inside' | 'outside';

interface Watched {
  incidentId: number;
  orgId: number;
  mode: Mode;
  lat: number;
  lng: number;
  radius: number;
  /** The incident's `updated_at` this entry reflects: an older event never overwrites it. */
  version: string;
  /** Where this instance last saw the person stand (unknown: outside). */
  state: Presence;
}

const isOpen = (status: string) => status === 'open' || status === 'in_progress';

export interface ArrivalWatch {
  /** The position observer (context.ts registers it with positionPort). */
  observe(ctx: AppContext, fix: ObservedFix): void;
  /** Resolves when every transition queued so far is written (tests; close). */
  idle(): Promise<void>;
  close(): void;
}

export function arrivalWatch(bus: EventBus): ArrivalWatch {
  /** user -> incident id -> what is watched; a user is in `byUser` once loaded. */
  const byUser = new Map<number, Map<number, Watched>>();
  /** incident id -> its assignee watched here. */
  const owner = new Map<number, number>();
  /** Users being loaded: the events that came meanwhile, applied after the rows. */
  const loading = new Map<number, Incident[]>();
  let chain: Promise<void> = Promise.resolve();

  function drop(incidentId: number): void {
    const u = owner.get(incidentId);
    if (u === undefined) return;
    owner.delete(incidentId);
    byUser.get(u)?.delete(incidentId);
  }

  /** One incident as an event shows it now. */
  function apply(i: Incident): void {
    const current = owner.get(i.Id);
    const entry = current === undefined ? undefined : byUser.get(current)?.get(i.Id);
    if (entry && entry.version > i.updated_at) return;
    const watch = isOpen(i.status) && i.assignee_id !== null && i.lat !== null && i.lng !== null;
    if (!watch || current !== i.assignee_id) drop(i.Id);
    if (!watch) return;
    const userId = i.assignee_id!;
    const pending = loading.get(userId);
    if (pending) pending.push(i);
    const list = byUser.get(userId);
    if (!list) return; // not loaded: their first fix reads it
    list.set(i.Id, { incidentId: i.Id, orgId: i.org_id, mode: i.livemode ? 'live' : 'test', lat: i.lat!, lng: i.lng!, radius: i.arrival_radius_m, version: i.updated_at, state: entry?.state ?? 'outside' });
    owner.set(i.Id, userId);
  }

  const unsubscribe = bus.subscribe((e: LiveEvent) => {
    if (e.channel !== CHANNELS.incidents) return;
    if (e.type !== 'incident.created' && e.type !== 'incident.updated' && e.type !== 'incident.assigned') return;
    const payload = (e.payload ?? (e.data ? (JSON.parse(e.data) as { payload: unknown }).payload : undefined)) as Incident | undefined;
    if (payload && typeof payload.Id === 'number') apply(payload);
  });

  async function load(ctx: AppContext, userId: number): Promise<void> {
    loading.set(userId, []);
    try {
      const rows = await assignedOpen(ctx.db, userId);
      const list = new Map<number, Watched>();
      for (const r of rows) {
        list.set(r.id, { incidentId: r.id, orgId: r.org_id, mode: r.livemode === 1 ? 'live' : 'test', lat: r.lat, lng: r.lng, radius: r.arrival_radius_m, version: r.updated_at, state: r.state ?? 'outside' });
        owner.set(r.id, userId);
      }
      byUser.set(userId, list);
      for (const i of loading.get(userId) ?? []) apply(i);
    } finally {
      loading.delete(userId);
    }
  }

  /** The transitions one fix makes, decided in memory. */
  function decide(fix: ObservedFix, list: Map<number, Watched>): { w: Watched; to: Presence }[] {
    const out: { w: Watched; to: Presence }[] = [];
    const accuracy = fix.accuracy ?? 0;
    for (const w of list.values()) {
      if (w.orgId !== fix.orgId || w.mode !== fix.mode) continue;
      if (accuracy > w.radius) continue; // too coarse to say either way
      const d = haversineM(w.lat, w.lng, fix.lat, fix.lng);
      if (d <= w.radius && w.state !== 'inside') out.push({ w, to: 'inside' });
      else if (d > w.radius + accuracy && w.state === 'inside') out.push({ w, to: 'outside' });
    }
    return out;
  }

  async function write(ctx: AppContext, fix: ObservedFix, moves: { w: Watched; to: Presence }[]): Promise<void> {
    for (const { w, to } of moves) {
      w.state = to; // whoever claims it, this instance now knows where they stand
      await ctx.transaction(async (tx) => {
        if (!(await claimPresence(tx.db, w.incidentId, fix.userId, to, iso(ctx.clock.now())))) return;
        const position = { source: 'position', lat: fix.lat, lng: fix.lng, accuracy: fix.accuracy };
        await recordProgress(ctx, tx, w.incidentId, fix.userId, to === 'inside' ? 'on_scene' : 'departed', position);
      });
    }
  }

  function run(ctx: AppContext, fix: ObservedFix): void {
    const step = async () => {
      if (!byUser.has(fix.userId)) await load(ctx, fix.userId);
      const list = byUser.get(fix.userId);
      if (!list || list.size === 0) return;
      const moves = decide(fix, list);
      if (moves.length > 0) await write(ctx, fix, moves);
    };
    chain = chain.then(step).catch((err: unknown) => ctx.log.error({ err }, 'arrival: a position check failed'));
  }

  return {
    observe(ctx, fix) {
      const list = byUser.get(fix.userId);
      // The common case decides at once: a loaded user with nothing open near them queues nothing.
      if (list && (list.size === 0 || decide(fix, list).length === 0)) return;
      run(ctx, fix);
    },
    idle: () => chain,
    close: unsubscribe,
  };
}
