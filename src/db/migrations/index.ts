import type { MigrationModule } from '../migrate.js';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-orgs-teams.js';
import * as m0003 from './0003-incidents.js';
import * as m0004 from './0004-signals.js';
import * as m0005 from './0005-scheduling.js';
import * as m0006 from './0006-deliveries.js';
import * as m0007 from './0007-idempotency.js';
import * as m0008 from './0008-timeline.js';
import * as m0013 from './0013-calendars.js';
import * as m0012 from './0012-devices.js';
import * as m0011 from './0011-dispatch.js';
import * as m0016 from './0016-integrations.js';
import * as m0009 from './0009-email-verification.js';
import * as m0015 from './0015-retention.js';
import * as m0010 from './0010-web-console.js';
import * as m0017 from './0017-booking-language.js';
import * as m0018 from './0018-list-sort-indexes.js';
import * as m0019 from './0019-incident-list-versions.js';
import * as m0020 from './0020-incident-write-indexes.js';
import * as m0021 from './0021-mode-scoped-user-resources.js';
import * as m0022 from './0022-calendar-halt.js';
import * as m0023 from './0023-inbound-mail.js';
import * as m0024 from './0024-inbound-mail-retention.js';
import * as m0027 from './0027-incident-integration.js';
import * as m0030 from './0030-oncall.js';
import * as m0040 from './0040-paging.js';
import * as m0041 from './0041-paging-walk.js';
import * as m0042 from './0042-incident-subscriptions.js';
import * as m0043 from './0043-heartbeats.js';
import * as m0044 from './0044-arrival.js';
import * as m0045 from './0045-sites.js';
import * as m0046 from './0046-tracks.js';
import * as m0047 from './0047-incident-report-facts.js';
import * as m0048 from './0048-oncall-report.js';
import * as m0049 from './0049-incident-report-range.js';
import * as m0050 from './0050-track-staging.js';
import * as m0051 from './0051-oncall-schedule-version.js';
import * as m0052 from './0052-report-results.js';

/** Every migration, in order. Names never change once released. */
export const migrations: Record<string, MigrationModule> = {
  '0001-foundation': m0001,
  '0002-orgs-teams': m0002,
  '0003-incidents': m0003,
  '0004-signals': m0004,
  '0005-scheduling': m0005,
  '0006-deliveries': m0006,
  '0007-idempotency': m0007,
  '0008-timeline': m0008,
  '0013-calendars': m0013,
  '0012-devices': m0012,
  '0011-dispatch': m0011,
  '0016-integrations': m0016,
  '0009-email-verification': m0009,
  '0015-retention': m0015,
  '0010-web-console': m0010,
  '0017-booking-language': m0017,
  '0018-list-sort-indexes': m0018,
  '0019-incident-list-versions': m0019,
  '0020-incident-write-indexes': m0020,
  '0021-mode-scoped-user-resources': m0021,
  '0022-calendar-halt': m0022,
  '0023-inbound-mail': m0023,
  '0024-inbound-mail-retention': m0024,
  '0027-incident-integration': m0027,
  '0030-oncall': m0030,
  '0040-paging': m0040,
  '0041-paging-walk': m0041,
  '0042-incident-subscriptions': m0042,
  '0043-heartbeats': m0043,
  '0044-arrival': m0044,
  '0045-sites': m0045,
  '0046-tracks': m0046,
  '0047-incident-report-facts': m0047,
  '0048-oncall-report': m0048,
  '0049-incident-report-range': m0049,
  '0050-track-staging': m0050,
  '0051-oncall-schedule-version': m0051,
  '0052-report-results': m0052,
};
