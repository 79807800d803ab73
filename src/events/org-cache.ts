import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { EventBus } from './bus.js';
import type { AccessNotice } from './access.js';

/** An entry is read again after this long even without a notice (one lost while Redis was away). */
const MAX_AGE_MS = 30_000;
/** Orgs kept at most (the oldest go first). */
const MAX_ORGS = 10_000;

/**
 * Which org a notice drops for a cache of one kind: the org its own notice names (`{sitesOf}`,
 * `{subscriptionsOf}`, `{integrationsOf}`, `{dispatchOf}`, `{maintenanceOf}`), or the org of an org-wide notice (`{orgId}` alone: the
 * org was deleted). A membership's `{userId, orgId}` and a device's notices drop nothing here.
 */
export function orgNoticeOf(kind: 'subscriptionsOf' | 'sitesOf' | 'integrationsOf' | 'dispatchOf' | 'maintenanceOf'): (n: AccessNotice) => number | undefined {
  return (n) => n[kind] ?? (n.userId === undefined && n.deviceId === undefined ? n.orgId : undefined);
}

/**
 * Something read per org and kept in memory (an org's incident subscriptions, its sites), dropped
 * when a notice on the bus says it changed: `orgOf` answers which org a notice invalidates (none:
 * undefined). The notice reaches this instance at once and the others through the Redis bus. While
 * this instance may be missing notices (the bus's accessEpoch is undefined) nothing is served from
 * memory, and when hearing resumes everything held is dropped; an entry is also read again after
 * 30 s. A read that started before an invalidation of its org is answered but not kept.
 */
export class OrgCache<T> {
  private readonly byOrg = new Map<number, { value: T; at: number }>();
  /** Per org, the invalidation counter when it was last invalidated. */
  private readonly invalidated = new Map<number, number>();
  private seq = 0;
  /** Reads that started before this counter are never kept (memory was cleared since). */
  private floor = 0;
  private epoch: number | undefined = 0;
  readonly stop: () => void;

  constructor(
    private readonly bus: EventBus,
    private readonly orgOf: (n: AccessNotice) => number | undefined,
    private readonly load: (db: Kysely<DB>, orgId: number) => Promise<T>,
    private readonly now: () => number = Date.now,
  ) {
    this.stop = bus.subscribeAccess((n) => this.onNotice(n));
  }

  /** The org's value, from memory when fresh; `db` is the caller's (inside a transaction: tx.db). */
  async of(db: Kysely<DB>, orgId: number): Promise<T> {
    const usable = this.usable();
    const hit = usable ? this.byOrg.get(orgId) : undefined;
    if (hit && this.now() - hit.at < MAX_AGE_MS) return hit.value;
    const started = this.seq;
    const value = await this.load(db, orgId);
    if (usable && this.usable() && started >= this.floor && (this.invalidated.get(orgId) ?? -1) <= started) {
      if (this.byOrg.size >= MAX_ORGS) this.byOrg.delete(this.byOrg.keys().next().value!);
      this.byOrg.set(orgId, { value, at: this.now() });
    }
    return value;
  }

  /** The org's value when memory holds it fresh, without waiting (a hot path's fast answer); else undefined. */
  peek(orgId: number): T | undefined {
    if (!this.usable()) return undefined;
    const hit = this.byOrg.get(orgId);
    return hit && this.now() - hit.at < MAX_AGE_MS ? hit.value : undefined;
  }

  /** Whether memory may serve now (this instance hears every notice); while not, of() reads every time. */
  serving(): boolean {
    return this.usable();
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
    const orgId = this.orgOf(n);
    if (orgId === undefined) return;
    this.byOrg.delete(orgId);
    this.invalidated.set(orgId, ++this.seq);
    if (this.invalidated.size > MAX_ORGS) {
      this.invalidated.clear();
      this.floor = ++this.seq;
    }
  }
}
