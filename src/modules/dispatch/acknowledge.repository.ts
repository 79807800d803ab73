import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { IncidentRow } from '../incidents/incidents.repository.js';

/**
 * Sets the acknowledgement if nobody has (one conditional update: of concurrent calls exactly one
 * gets the row back) and stops the escalation clock. `userId` is null for a tool (an integration).
 */
export async function claimAcknowledgement(db: Kysely<DB>, id: number, userId: number | null, nowIso: string): Promise<IncidentRow | undefined> {
  return db
    .updateTable('incidents')
    .set({ acknowledged_at: nowIso, acknowledged_by: userId, escalate_at: null, updated_at: nowIso })
    .where('id', '=', id)
    .where('acknowledged_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}
