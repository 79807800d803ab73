import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import { OrgCache, orgNoticeOf } from '../../events/org-cache.js';
import type { HeartbeatRow } from './heartbeats.repository.js';
import { findByKeyHashWithHeartbeat, keyedIntegrationsOfOrg, type IntegrationRow } from './integrations.repository.js';

/** Keys whose org is remembered at most (the oldest go first). */
const MAX_KEYS = 50_000;

export interface Keyed {
  integration: IntegrationRow;
  heartbeat: HeartbeatRow | null;
}

/**
 * The integration a tool's key names, from memory: every request of a monitoring tool starts by
 * authenticating its key, and on SQLite that read outside any transaction costs a WAL snapshot of
 * its own, on PostgreSQL a round trip. Each org's active integrations (heartbeats excepted: their
 * row changes with every ping) are held by key hash in an OrgCache (events/org-cache.ts): every
 * creation, change and revocation publishes an `{integrationsOf}` notice after it commits, and the
 * org's entry is dropped on every instance (through the Redis bus), so a revoked key is refused
 * everywhere as soon as the notice arrives; nothing is served from memory while an instance may be
 * missing notices, and an entry is read again after 30 s regardless.
 *
 * A key's org never changes, so which org a key belongs to is remembered apart (found keys only:
 * a wrong key costs the one read it costs today and takes no memory).
 */
export class IntegrationKeyCache {
  private readonly orgOfKey = new Map<string, number>();
  private readonly orgs: OrgCache<ReadonlyMap<string, IntegrationRow>>;

  constructor(bus: EventBus) {
    this.orgs = new OrgCache(bus, orgNoticeOf('integrationsOf'), keyedIntegrationsOfOrg);
  }

  /** The active integration of a key's SHA-256 with its heartbeat (null: not one), or undefined. */
  async byHash(db: Kysely<DB>, keyHash: string): Promise<Keyed | undefined> {
    const orgId = this.orgOfKey.get(keyHash);
    if (orgId !== undefined && this.orgs.serving()) {
      const integration = (await this.orgs.of(db, orgId)).get(keyHash);
      if (integration) return { integration, heartbeat: null };
    }
    const found = await findByKeyHashWithHeartbeat(db, keyHash);
    if (found && !found.heartbeat && !this.orgOfKey.has(keyHash)) {
      if (this.orgOfKey.size >= MAX_KEYS) this.orgOfKey.delete(this.orgOfKey.keys().next().value!);
      this.orgOfKey.set(keyHash, found.integration.org_id);
    }
    return found;
  }

  stop(): void {
    this.orgs.stop();
  }
}
