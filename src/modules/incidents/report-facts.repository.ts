// What reports need of an incident (issue #39), kept on its row as its timeline is written
// (migration 0047): the first acknowledgement, the first escalation, how often it was reopened.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { TimelineType } from './incidents.tables.js';

const DONE = new Set(['resolved', 'closed']);

/** Called by recordTimeline in the event's transaction; one conditional update for the events that matter, nothing for the others. */
export async function noteReportFacts(db: Kysely<DB>, incidentId: number, type: TimelineType, data: Record<string, unknown>, at: string): Promise<void> {
  if (type === 'acknowledged') {
    await db.updateTable('incidents').set({ first_acknowledged_at: at }).where('id', '=', incidentId).where('first_acknowledged_at', 'is', null).execute();
  } else if (type === 'escalated') {
    await db.updateTable('incidents').set({ escalated_at: at }).where('id', '=', incidentId).where('escalated_at', 'is', null).execute();
  } else if (type === 'status_changed' && DONE.has(String(data.from)) && !DONE.has(String(data.to))) {
    await db.updateTable('incidents').set({ reopened_count: sql`reopened_count + 1` }).where('id', '=', incidentId).execute();
  }
}
