import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { EventBus } from '../../events/bus.js';
import { OrgCache, orgNoticeOf } from '../../events/org-cache.js';
import { HOUR, iso, type Clock } from '../../lib/clock.js';
import type { IntegrationRow } from './integrations.repository.js';
import { activeAt, coveringWindow, covers } from './maintenance.js';
import { windowsBetween, type WindowRow } from './maintenance.repository.js';

/** How far past its reading an org's entry answers (it holds the windows that begin meanwhile). */
const AHEAD_MS = HOUR;
/** Windows held per org at most: an org with more in the hour is read on every event, as before. */
const MAX_HELD = 100;

interface Held {
  /** The instants [from, until) the entry answers for, on the app's clock. */
  from: number;
  until: number;
  /** The org's windows of both modes overlapping [from, until), the one ending last first; null: more than MAX_HELD. */
  windows: WindowRow[] | null;
}

/**
 * Which maintenance window covers an integration, from memory: every trigger of every tool asks it
 * (inside the event's transaction: on PostgreSQL a round trip), and windows change rarely. Each org's
 * windows overlapping the hour after the reading are held in an OrgCache (events/org-cache.ts: dropped
 * by a `{maintenanceOf}` notice on every instance, which planning, changing and ending a window
 * publish; nothing served while an instance may be missing notices; read again after 30 s). Holding
 * the hour ahead makes a window begin and end on time without a read: an entry answers only for
 * instants inside its hour (on the app's clock), and outside it, or for an org with more than
 * MAX_HELD windows in it, the database is read as before.
 */
export class MaintenanceCache {
  private readonly orgs: OrgCache<Held>;

  constructor(bus: EventBus, private readonly clock: Clock) {
    this.orgs = new OrgCache(bus, orgNoticeOf('maintenanceOf'), (db, orgId) => this.load(db, orgId));
  }

  private async load(db: Kysely<DB>, orgId: number): Promise<Held> {
    const from = this.clock.nowMs();
    const until = from + AHEAD_MS;
    const windows = await windowsBetween(db, orgId, iso(new Date(from)), iso(new Date(until)), MAX_HELD + 1);
    return { from, until, windows: windows.length > MAX_HELD ? null : windows };
  }

  /** As coveringWindow (maintenance.ts): the active window covering the integration at `now`, the one ending last. */
  async covering(db: Kysely<DB>, integration: Pick<IntegrationRow, 'id' | 'org_id' | 'livemode'>, now: Date): Promise<WindowRow | undefined> {
    const held = await this.orgs.of(db, integration.org_id);
    const t = now.getTime();
    if (held.windows === null || t < held.from || t >= held.until) return coveringWindow(db, integration, now);
    const at = iso(now);
    return held.windows.find((w) => w.livemode === integration.livemode && activeAt(w, at) && covers(w, integration.id));
  }

  stop(): void {
    this.orgs.stop();
  }
}
