import type { EventBus } from '../../events/bus.js';
import { OrgCache, orgNoticeOf } from '../../events/org-cache.js';
import { findOpeningDefaults, type OpeningDefaults } from './escalation.repository.js';

const caches = new WeakMap<EventBus, OrgCache<OpeningDefaults>>();

/**
 * What a new incident takes from its org's dispatch settings (the acknowledgement timeouts and the
 * default escalation policy), per org in memory: every creation and every tool's trigger read it
 * inside its transaction, a round trip on PostgreSQL. One per bus (an app's instance). A change of
 * the settings publishes `{dispatchOf}` when it commits (modules/dispatch/settings.ts); the org's
 * entry is dropped on every instance (events/org-cache.ts has the rules, shared with the
 * subscription, site and integration key caches). The default policy from memory can name one
 * deleted on another instance before its notice arrived: placeIncident then reads the settings
 * again (incidents.service.ts).
 */
export function openingDefaultsCache(bus: EventBus): OrgCache<OpeningDefaults> {
  let cache = caches.get(bus);
  if (!cache) {
    cache = new OrgCache(bus, orgNoticeOf('dispatchOf'), findOpeningDefaults);
    caches.set(bus, cache);
  }
  return cache;
}
