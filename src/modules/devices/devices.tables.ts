import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/devices as stored (src/db/schema.ts composes DB from every module's tables).

/** A tracker app's device (issue #17): its token is stored as a SHA-256 only. */
export interface DevicesTable {
  id: Generated<number>;
  user_id: number;
  org_id: number;
  livemode: Flag;
  name: string;
  device_id: string;
  token_hash: string;
  created_at: string;
  updated_at: string;
  last_seen_at: string | null;
  revoked_at: string | null;
}

export interface DevicesTables {
  devices: DevicesTable;
}
