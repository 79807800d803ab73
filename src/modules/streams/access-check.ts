import type { AppContext } from '../../context.js';
import type { AccessCheck } from '../../events/access-recheck.js';
import { iso } from '../../lib/clock.js';
import { unrevokedKeyIds } from '../api-keys/index.js';
import { liveSessionIds } from '../auth/index.js';
import { orgIdsOfUsers } from '../orgs/index.js';

/**
 * How the hub checks open streams again (events/hub.ts `recheckAll`, and a slice every second):
 * the credential that opened each stream still holds (its key is not revoked, its session not ended
 * or expired) and its user is still a member of every org the stream carries. Access notices close
 * streams at once; this is for a notice that never arrived (Redis away between instances, issue
 * #31). Three queries per batch of streams (the hub's batches are at most 500), straight from the
 * database: the credential cache is kept by the same notices that may have been lost.
 */
export function streamAccessCheck(ctx: AppContext): AccessCheck {
  return async (streams) => {
    const keyIds = new Set<number>();
    const sessionIds = new Set<string>();
    const userIds = new Set<number>();
    for (const { access } of streams) {
      if (access.keyId !== undefined) keyIds.add(access.keyId);
      if (access.sessionId !== undefined) sessionIds.add(access.sessionId);
      userIds.add(access.userId);
    }
    const keys = await unrevokedKeyIds(ctx.db, [...keyIds]);
    const sessions = await liveSessionIds(ctx.db, [...sessionIds], iso(ctx.clock.now()));
    const orgsOf = await orgIdsOfUsers(ctx.db, [...userIds]);
    return streams.map(({ access, orgIds }) => {
      if (access.keyId !== undefined && !keys.has(access.keyId)) return false;
      if (access.sessionId !== undefined && !sessions.has(access.sessionId)) return false;
      const orgs = orgsOf.get(access.userId);
      for (const org of orgIds) if (!orgs?.has(org)) return false;
      return true;
    });
  };
}
