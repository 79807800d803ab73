import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

export type SiteKind = 'circle' | 'polygon';

export interface SitesTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  name: string;
  kind: SiteKind;
  /** The centre of a circle; null for a polygon. */
  lat: number | null;
  lng: number | null;
  radius_m: number | null;
  /** A polygon's GeoJSON Polygon as JSON text; null for a circle. */
  area: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

/** Whether a device is inside a site; written only on a transition (modules/sites presence). */
export interface SitePresenceTable {
  site_id: number;
  user_id: number;
  /** The device's `meta.device_id`, or `user` for a user's own beacon (as beacon_states). */
  device_key: string;
  livemode: Flag;
  inside: Flag;
  changed_at: string;
}

export interface SitesTables {
  sites: SitesTable;
  site_presence: SitePresenceTable;
}
