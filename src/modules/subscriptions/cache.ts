import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import { OrgCache, orgNoticeOf } from '../../events/org-cache.js';
import { subscriptionsOfOrg, type SubscriptionRow } from './subscriptions.repository.js';

/**
 * Each org's subscriptions (both modes) in memory, so that an incident change in an org without
 * any costs no query (recordTimeline is hot). Every change of an org's subscriptions publishes a
 * `{subscriptionsOf}` notice (events/access.ts) after it commits; the org's entry is dropped on
 * every instance (events/org-cache.ts has the rules, shared with the sites cache).
 */
export class SubscriptionCache {
  private readonly cache: OrgCache<readonly SubscriptionRow[]>;

  constructor(bus: EventBus) {
    this.cache = new OrgCache(bus, orgNoticeOf('subscriptionsOf'), subscriptionsOfOrg);
  }

  /** The org's subscriptions, from memory when fresh; `db` is the caller's (inside a transaction: tx.db). */
  ofOrg(db: Kysely<DB>, orgId: number): Promise<readonly SubscriptionRow[]> {
    return this.cache.of(db, orgId);
  }
}
