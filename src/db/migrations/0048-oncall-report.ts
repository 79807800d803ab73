import type { Kysely } from 'kysely';

// Reports (issue #39, the on-call report): the pages of an org and mode in a time range, read by
// `GET /v1/orgs/:org_slug/reports/oncall`. paging_pages had indexes by incident and by person
// only, so a range would have read every page of the instance; this one makes it a range scan of
// the org's pages. The report's other look-ups (a person's next page of the same incident, their
// acknowledgement, the escalation that moved on) go through the existing indexes by incident
// (paging_pages_incident_idx, incident_events_incident_idx).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('paging_pages_org_time_idx').on('paging_pages').columns(['org_id', 'livemode', 'created_at']).execute();
}
