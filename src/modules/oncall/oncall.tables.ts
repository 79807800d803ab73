import type { Generated } from 'kysely';

// The tables of modules/oncall as stored (src/db/schema.ts composes DB from every module's tables).

/** An on-call schedule (0030); shared by both modes. Deleted ones keep their row. */
export interface OncallSchedulesTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  slug: string;
  time_zone: string;
  description: string | null;
  /** Part of the signed feed link; bumping it revokes the old link. */
  feed_version: Generated<number>;
  /** Moved by every write that changes who is on call (row, layers, overrides): what the on-call memo is kept under (0051). */
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** The layers of a schedule in force from `effective_from` until the next version's. */
export interface OncallLayerVersionsTable {
  id: Generated<number>;
  schedule_id: number;
  effective_from: string;
  time_zone: string;
  /** JSON: the layers, in order of precedence (modules/oncall/resolver.ts LayerSpec). */
  layers: string;
  created_by: number | null;
  created_at: string;
}

/** An override; its start is never before its creation, and a deleted one counts until `deleted_at`. */
export interface OncallOverridesTable {
  id: Generated<number>;
  schedule_id: number;
  user_id: number;
  start_time: string;
  end_time: string;
  created_by: number | null;
  created_at: string;
  deleted_at: string | null;
}

/** One row per shift whose person was told of it: the handoff notice's exactly-once key. */
export interface OncallHandoffNoticesTable {
  schedule_id: number;
  user_id: number;
  shift_start: string;
  created_at: string;
}

export interface OncallTables {
  oncall_schedules: OncallSchedulesTable;
  oncall_layer_versions: OncallLayerVersionsTable;
  oncall_overrides: OncallOverridesTable;
  oncall_handoff_notices: OncallHandoffNoticesTable;
}
