import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import type { AccessNotice } from '../../events/access.js';
import { subscriptionsOfOrg, type SubscriptionRow } from './subscriptions.repository.js';

/** An entry is read again after this long even without a notice (one lost while Redis was away). */
const MAX_AGE_MS = 30_000;
/** Orgs kept at most (the oldest go first). */
const MAX_ORGS = 10_000;

interface Entry {
  rows: readonly SubscriptionRow[];
  at: number;
}

/**
 * Each org's subscriptions (both modes) in memory, so that an incident change in an org without
 * any costs no query (recordTimeline is hot). Every change of an org's subscriptions publishes a
 * `{subscriptionsOf}` notice (events/access.ts) after it commits, which reaches this instance at
 * once and the others through the Redis bus: the org's entry is dropped. While this instance may
 * be missing notices (the bus's accessEpoch is undefined) nothing is served from memory, and when
 * hearing resumes everything held is dropped; an entry is also read again after 30 s.
 */
export class SubscriptionCache {
  private readonly byOrg = new Map<number, Entry>();
  /** Per org, the invalidation counter when it was last invalidated (a read that started before is not kept). */
  private readonly invalidated = new Map<number, number>();
  private seq = 0;
  /** Reads that started before this counter are never kept (memory was cleared since). */
  private floor = 0;
  private epoch: number | undefined = 0;

  constructor(private readonly bus: EventBus) {
    bus.subscribeAccess((n) => this.onNotice(n));
  }

  /** The org's subscriptions, from memory when fresh; `db` is the caller's (inside a transaction: tx.db). */
  async ofOrg(db: Kysely<DB>, orgId: number): Promise<readonly SubscriptionRow[]> {
    const usable = this.usable();
    const hit = usable ? this.byOrg.get(orgId) : undefined;
    if (hit && Date.now() - hit.at < MAX_AGE_MS) return hit.rows;
    const started = this.seq;
    const rows = await subscriptionsOfOrg(db, orgId);
    if (usable && this.usable() && started >= this.floor && (this.invalidated.get(orgId) ?? -1) <= started) {
      if (this.byOrg.size >= MAX_ORGS) this.byOrg.delete(this.byOrg.keys().next().value!);
      this.byOrg.set(orgId, { rows, at: Date.now() });
    }
    return rows;
  }

  /** Whether memory may serve now; drops everything when hearing resumed after a gap. */
  private usable(): boolean {
    const epoch = this.bus.accessEpoch ? this.bus.accessEpoch() : 0;
    if (epoch !== this.epoch) {
      this.byOrg.clear();
      this.epoch = epoch;
      this.floor = ++this.seq;
    }
    return epoch !== undefined;
  }

  private onNotice(n: AccessNotice): void {
    const orgId = n.subscriptionsOf ?? (n.userId === undefined && n.deviceId === undefined ? n.orgId : undefined);
    if (orgId === undefined) return;
    this.byOrg.delete(orgId);
    this.invalidated.set(orgId, ++this.seq);
    if (this.invalidated.size > MAX_ORGS) {
      this.invalidated.clear();
      this.floor = ++this.seq;
    }
  }
}
