import type { MigrationModule } from '../migrate.js';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-orgs-teams.js';
import * as m0003 from './0003-incidents.js';
import * as m0004 from './0004-signals.js';
import * as m0005 from './0005-scheduling.js';
import * as m0006 from './0006-deliveries.js';
import * as m0007 from './0007-idempotency.js';
import * as m0009 from './0009-email-verification.js';

/** Every migration, in order. Names never change once released. */
export const migrations: Record<string, MigrationModule> = {
  '0001-foundation': m0001,
  '0002-orgs-teams': m0002,
  '0003-incidents': m0003,
  '0004-signals': m0004,
  '0005-scheduling': m0005,
  '0006-deliveries': m0006,
  '0007-idempotency': m0007,
  '0009-email-verification': m0009,
};
