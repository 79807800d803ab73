import type { Kysely } from 'kysely';

// Reports (issue #39, the incident report): the incidents of an org and mode opened in a time range,
// read by `GET /v1/orgs/:org_slug/reports/incidents`. Incidents had no index by creation time, so
// a 30-day report read every incident of the org (a million rows in bench/reports.bench.ts); this
// one makes the range a range scan of the org's incidents.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('incidents_org_created_idx').on('incidents').columns(['org_id', 'livemode', 'created_at']).execute();
}
