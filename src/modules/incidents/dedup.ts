import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { iso } from '../../lib/clock.js';
import { conflict } from '../../lib/errors.js';
import { recordTimeline } from '../dispatch/timeline.js';
import * as repo from './incidents.repository.js';
import type { IncidentRow, NewIncident } from './incidents.repository.js';
import type { Incident } from './incidents.schemas.js';

/**
 * `source_ref` is a dedup key: while an incident of that org, mode and ref is open or in progress,
 * another trigger appends `alert_repeated` to its timeline instead of opening a second one. The
 * partial unique index of migration 0016 decides races (insert, and on conflict repeat), so 20
 * identical triggers at once open exactly one incident on either engine.
 */
export interface Placed {
  incident: IncidentRow;
  created: boolean;
  /** Triggers received for the incident so far, the first included. */
  count: number;
  /** The incident's view as `incident.created` carried it (placeIncident, for a creation). */
  view?: Incident;
}

/** Views answered for a repeat rather than a creation (POST /v1/tickets answers them with 200). */
export const repeatedViews = new WeakSet<object>();

const ATTEMPTS = 3;

export async function insertOrRepeat(ctx: AppContext, tx: Tx, row: NewIncident, actorId: number | null, data: Record<string, unknown> = {}): Promise<Placed> {
  const ref = row.source_ref;
  if (ref === null) return { incident: await repo.insertIncident(tx.db, row), created: true, count: 1 };
  const lock = ctx.database.dialect === 'postgres';
  for (let i = 0; i < ATTEMPTS; i += 1) {
    const inserted = await repo.insertIncidentUnlessOpen(tx.db, row);
    if (inserted) return { incident: inserted, created: true, count: 1 };
    const open = await repo.findOpenByRef(tx.db, lock, { org_id: row.org_id, livemode: row.livemode, source_ref: ref });
    if (open) return { incident: open, created: false, count: await recordRepeat(ctx, tx, open, actorId, data) };
    // The open one was resolved between the insert and the look-up: insert again.
  }
  throw conflict('The incident of this source_ref changed while the trigger was handled; send it again');
}

/** Appends `alert_repeated {count, ...data}`; the caller holds the incident's row lock (or SQLite's write lock). */
export async function recordRepeat(ctx: AppContext, tx: Tx, incident: IncidentRow, actorId: number | null, data: Record<string, unknown>): Promise<number> {
  const count = await repo.nextRepeatCount(tx.db, incident.id);
  await repo.touchIncident(tx.db, incident, iso(ctx.clock.now()));
  await recordTimeline(ctx, tx, incident, 'alert_repeated', actorId, { ...data, count });
  return count;
}

/** Reopening an incident whose source_ref another open incident holds breaks the index: 409, not 500. */
export function refTaken(err: unknown): never {
  if (isUniqueViolation(err, 'source_ref')) throw conflict('Another open incident has this source_ref; resolve it first');
  throw err;
}
