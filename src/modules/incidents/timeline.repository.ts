import type { Kysely } from 'kysely';
import { insertRows } from '../../db/fixed.js';
import type { DB, IncidentEventsTable, TimelineType } from '../../db/schema.js';

export interface TimelineRow {
  id: number;
  incident_id: number;
  type: TimelineType;
  actor_id: number | null;
  actor_name: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

/** A timeline row to insert: the table's columns but its generated id, its data as a value (stored as JSON text). */
export type NewTimelineEvent = Omit<IncidentEventsTable, 'id' | 'data'> & { data: Record<string, unknown> };

type StoredTimelineRow = Omit<TimelineRow, 'data'> & { data: string };
/** The row with its data as a value. */
const withData = (r: StoredTimelineRow): TimelineRow => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> });

function withActor(db: Kysely<DB>) {
  return db
    .selectFrom('incident_events')
    .leftJoin('users', 'users.id', 'incident_events.actor_id')
    .select([
      'incident_events.id',
      'incident_events.incident_id',
      'incident_events.type',
      'incident_events.actor_id',
      'users.name as actor_name',
      'incident_events.data',
      'incident_events.created_at',
    ]);
}

/**
 * Inserts the event and answers it with its actor's name: read back with the name unless the
 * caller knows it (`actorName`, the name of `e.actor_id`) or there is no actor, so a creation
 * spends one statement on its `created` event, not two.
 */
export async function insertEvent(db: Kysely<DB>, e: NewTimelineEvent, actorName?: string): Promise<TimelineRow> {
  // Compiled once (db/fixed.ts): every event has the same columns.
  const data = JSON.stringify(e.data);
  const { id } = (await insertRows<{ id: number }>(db, 'incident_events', [{ ...e, data }], 'id')).rows[0]!;
  if (e.actor_id !== null && actorName === undefined) return withData(await withActor(db).where('incident_events.id', '=', id).executeTakeFirstOrThrow());
  // The data as it reads back (what JSON keeps of it), not the caller's object.
  return withData({ id, incident_id: e.incident_id, type: e.type, actor_id: e.actor_id, actor_name: e.actor_id === null ? null : actorName!, data, created_at: e.created_at });
}

/** Oldest first; `types` narrows it (the public status page reads only what it may show). */
export async function listEvents(db: Kysely<DB>, incidentId: number, types?: readonly TimelineType[]): Promise<TimelineRow[]> {
  let q = withActor(db).where('incident_events.incident_id', '=', incidentId);
  if (types) q = q.where('incident_events.type', 'in', [...types]);
  return (await q.orderBy('incident_events.id').execute()).map(withData);
}
