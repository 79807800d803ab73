import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/signals as stored (src/db/schema.ts composes DB from every module's tables).

export type SignalType = 'beacon' | 'capture' | 'note' | 'checkin' | 'alert';

export interface SignalsTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  user_id: number | null;
  type: Exclude<SignalType, 'beacon'>;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  note: string | null;
  image_url: string | null;
  ticket_id: number | null;
  meta: string;
  created_at: string;
}

export interface BeaconStatesTable {
  livemode: Flag;
  user_id: number;
  /** `meta.device_id`, or `user` for a user beaconing without one. */
  device_key: string;
  device_id: string | null;
  org_id: number;
  active: Flag;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  meta: string;
  /** When the shown position was taken; an older one never replaces it. */
  position_at: string;
  last_seen_at: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  action: string;
  user_id: number | null;
  device_id: string | null;
  meta: string;
  created_at: string;
}

export interface SignalsTables {
  signals: SignalsTable;
  beacon_states: BeaconStatesTable;
  audit_log: AuditLogTable;
}
