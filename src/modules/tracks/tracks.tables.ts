import type { Generated } from 'kysely';
import type { Flag } from '../../db/schema.js';

// The tables of modules/tracks as stored (src/db/schema.ts composes DB from every module's tables).

/** One accepted position of a device, kept while the org's `tracks_days` says so (0046). */
export interface PositionTracksTable {
  id: Generated<number>;
  org_id: number;
  livemode: Flag;
  user_id: number;
  /** The device's `meta.device_id` (a field terminal or a tracker app), `user` for a user's own beacon. */
  device_id: string;
  lat: number;
  lng: number;
  accuracy: number | null;
  recorded_at: string;
}

export interface TracksTables {
  position_tracks: PositionTracksTable;
  /** Positions flushed and not yet moved to `position_tracks` (0050): the same columns, no index but the id. */
  track_staging: PositionTracksTable;
}
