import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import type { AccessNotice } from '../../events/access.js';
import { sha256 } from '../../lib/crypto.js';
import { findActiveDeviceByToken, type DeviceRow } from './devices.repository.js';

/** A cached device; `valid` turns false the moment a notice covering it arrives (a fix in flight checks it). */
export interface CachedDevice {
  readonly device: DeviceRow;
  valid: boolean;
  readonly at: number;
}

/** An entry is read again after this long even without a notice (a notice lost while Redis was away). */
const MAX_AGE_MS = 30_000;
/** Tokens kept at most (the oldest go first). */
const MAX_ENTRIES = 50_000;

/**
 * Device tokens (by their SHA-256) resolved from memory, so a tracker fix reads no database row.
 * Every change that ends or changes a device's access publishes an access notice (`{deviceId}`
 * on revoke and on PATCH, `{userId}`, `{userId, orgId}`, `{orgId}` from elsewhere), which reaches
 * this instance at once and the others through the Redis bus: the entry is dropped and marked
 * invalid, so a fix that authenticated with it just before is refused at its next check.
 */
export class DeviceCache {
  private readonly byHash = new Map<string, CachedDevice>();
  /**
   * The same entries by the token's text, so a known token is not hashed again on every fix. Bounded
   * like byHash, and every notice is applied to both maps (an entry may outlive its byHash twin).
   */
  private readonly byText = new Map<string, CachedDevice>();
  /** Per device id, the invalidation counter when it was last invalidated (a read that started before is read again). */
  private readonly invalidated = new Map<number, number>();
  private seq = 0;

  /** Built once per instance (context.ts); `bus` brings the access notices of every instance. */
  constructor(
    private readonly db: Kysely<DB>,
    bus: EventBus,
  ) {
    bus.subscribeAccess((n) => this.onNotice(n));
  }

  async byToken(hash: string): Promise<CachedDevice | undefined> {
    const hit = this.byHash.get(hash);
    if (hit && hit.valid && Date.now() - hit.at < MAX_AGE_MS) return hit;
    if (hit) this.byHash.delete(hash);
    for (;;) {
      const started = this.seq;
      const device = await findActiveDeviceByToken(this.db, hash);
      if (!device) return undefined;
      // Invalidated while it was being read: what was read may be stale.
      if ((this.invalidated.get(device.id) ?? -1) > started) continue;
      const entry: CachedDevice = { device, valid: true, at: Date.now() };
      if (this.byHash.size >= MAX_ENTRIES) this.byHash.delete(this.byHash.keys().next().value!);
      this.byHash.set(hash, entry);
      return entry;
    }
  }

  /**
   * The entry of a token by its text, when it is cached, valid and fresh: synchronous, no hash (the
   * hot path of a tracker sending fixes). Undefined: resolve it with byTokenText.
   */
  known(token: string): CachedDevice | undefined {
    const hit = this.byText.get(token);
    if (hit === undefined) return undefined;
    if (hit.valid && Date.now() - hit.at < MAX_AGE_MS) return hit;
    this.byText.delete(token);
    return undefined;
  }

  /** The entry of a token (by its SHA-256, as byToken), remembered by its text for known(). */
  async byTokenText(token: string): Promise<CachedDevice | undefined> {
    const hit = this.known(token);
    if (hit) return hit;
    const entry = await this.byToken(sha256(token));
    if (entry?.valid) {
      if (this.byText.size >= MAX_ENTRIES) this.byText.delete(this.byText.keys().next().value!);
      this.byText.set(token, entry);
    }
    return entry;
  }

  private onNotice(n: AccessNotice): void {
    if (n.deviceId === undefined && n.userId === undefined && n.orgId === undefined) return;
    for (const [hash, e] of this.byHash) {
      if (!covers(n, e.device)) continue;
      e.valid = false;
      this.byHash.delete(hash);
      this.invalidated.set(e.device.id, ++this.seq);
    }
    for (const [token, e] of this.byText) {
      if (!covers(n, e.device)) continue;
      e.valid = false;
      this.byText.delete(token);
      this.invalidated.set(e.device.id, ++this.seq);
    }
    if (n.deviceId !== undefined) this.invalidated.set(n.deviceId, ++this.seq);
    if (this.invalidated.size > MAX_ENTRIES) this.invalidated.clear();
  }
}

/** Whether an access notice covers a device: the device itself, or its user and/or org. */
function covers(n: AccessNotice, d: DeviceRow): boolean {
  return n.deviceId !== undefined ? d.id === n.deviceId : (n.userId === undefined || d.user_id === n.userId) && (n.orgId === undefined || d.org_id === n.orgId);
}

