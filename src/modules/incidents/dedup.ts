import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { iso } from '../../lib/clock.js';
import { conflict } from '../../lib/errors.js';
import { recordTimeline } from './timeline.js';
import * as repo from './incidents.repository.js';
import type { IncidentRow, NewIncident } from './incidents.repository.js';
import type { Incident } from './incidents.schemas.js';

/**
 * `source_ref` is a dedup key: while an incident of that org, mode and ref is open or in progress,
 * another trigger appends `alert_repeated` to its timeline instead of opening a second one. The
 * partial unique index of migration 0016 decides races (insert, and on conflict repeat), so 20
 * identical triggers at once open exactly one incident on either engine. The open incident is
 * looked up before the insert (on PostgreSQL in the same statement, repo.lockOpenOrInsert), so a
 * repeat takes no incident number; on PostgreSQL a trigger that loses a race to open one still used
 * up a sequence value (as a rolled-back creation does).
 */
export interface Placed {
  incident: IncidentRow;
  created: boolean;
  /** Triggers received for the incident so far, the first included. */
  count: number;
  /** The incident's view as `incident.created` carried it (placeIncident, for a creation). */
  view?: Incident;
}

/**
 * Rounds of look-up and insert before giving up. Each round after the first means the ref's open
 * incident was resolved between this trigger's look-up and its insert, and another opened in its
 * place, by other transactions (PostgreSQL). Triggers and resolves of one key racing across
 * instances must never be refused (a PagerDuty-speaking tool does not retry a 4xx, issue #31 F6),
 * so the loop goes on until the trigger lands; the bound only stops a runaway.
 */
const MAX_ROUNDS = 1_000;

export async function insertOrRepeat(ctx: AppContext, tx: Tx, row: NewIncident, actorId: number | null, data: Record<string, unknown> = {}): Promise<Placed> {
  const ref = row.source_ref;
  if (ref === null) return { incident: await repo.insertIncident(tx.db, row), created: true, count: 1 };
  const postgres = ctx.database.dialect === 'postgres';
  const key = { org_id: row.org_id, livemode: row.livemode, source_ref: ref };
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    if (postgres) {
      // PostgreSQL: the look-up and the insert in one statement (repo.lockOpenOrInsert), a repeat taking no number either.
      const placed = await repo.lockOpenOrInsert(tx.db, row);
      if (placed && 'created' in placed) return { incident: placed.created, created: true, count: 1 };
      if (placed) return { incident: placed.open, created: false, count: await recordRepeat(ctx, tx, placed.open, actorId, data) };
      continue;
    }
    // Looked up first, so that a repeat never reaches the insert: an insert refused by ON CONFLICT
    // has already taken the next id (a PostgreSQL sequence value, SQLite's AUTOINCREMENT counter),
    // and incident numbers are what reporters see (issue #32). The index still decides races.
    // SQLite (PostgreSQL took the branch above): its one writer's lock is held, no row lock to take.
    const open = await repo.findOpenByRef(tx.db, false, key);
    if (open) return { incident: open, created: false, count: await recordRepeat(ctx, tx, open, actorId, data) };
    const inserted = await repo.insertIncidentUnlessOpen(tx.db, row);
    if (inserted) return { incident: inserted, created: true, count: 1 };
    // Another transaction opened one between the look-up and the insert: look again.
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
