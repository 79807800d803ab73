import type { Kysely } from 'kysely';
import { flag, type DB, type Mode } from '../../db/schema.js';
import { scoped } from '../../db/scope.js';

/**
 * Positions of the org's active devices in one mode, with their owner's name and slug, except
 * the asking device's own (OwnTracks draws that one itself).
 */
export async function activeTeammates(db: Kysely<DB>, orgId: number, mode: Mode, self: { userId: number; deviceKey: string }, limit: number) {
  return db
    .selectFrom('beacon_states as b')
    .innerJoin('users', 'users.id', 'b.user_id')
    .select(['b.device_key', 'b.lat', 'b.lng', 'b.accuracy', 'b.position_at', 'users.name', 'users.slug'])
    .where('b.active', '=', 1)
    .$call(scoped({ orgIds: [orgId], mode }, 'b'))
    .where('b.lat', 'is not', null)
    .where('b.lng', 'is not', null)
    .where((eb) => eb.not(eb.and([eb('b.user_id', '=', self.userId), eb('b.device_key', '=', self.deviceKey), eb('b.livemode', '=', flag(mode === 'live'))])))
    .orderBy('b.last_seen_at', 'desc')
    .limit(limit)
    .execute();
}
