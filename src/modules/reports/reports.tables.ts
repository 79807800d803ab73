import type { Flag } from '../../db/schema.js';

/**
 * A report's stored answer (stored-results.ts): one row per org, mode, report and question (its
 * range, zone and grouping), written only for questions whose answer took long to compute.
 */
export interface ReportResultsTable {
  org_id: number;
  livemode: Flag;
  kind: 'incidents' | 'oncall';
  /** The question as canonical JSON: from, to, tz, group_by. */
  question: string;
  /** The version of the data the answer was computed from (`dataVersion`); '' while none is stored. */
  data_version: string;
  /** The instant the figures are of (ISO); '' while none is stored. */
  as_of: string;
  /** The answer as JSON; null until the first is stored. */
  body: string | null;
  /** How long the last computation took, in ms. */
  compute_ms: number;
  /** The instance recomputing it holds it until then (ISO), with its token; null: nobody. */
  lease_until: string | null;
  lease_token: string | null;
}

export interface ReportsTables {
  report_results: ReportResultsTable;
}
