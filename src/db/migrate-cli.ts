// `npm run db:migrate`: applies pending migrations to the configured database and exits.
import path from 'node:path';
import { loadConfig } from '../config.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

const config = loadConfig();
const database = openDatabase({
  databaseUrl: config.databaseUrl,
  databaseSchema: config.databaseSchema,
  sqliteFile: path.join(config.dataDir, 'muster.db'),
});
try {
  const { results = [] } = await migrateToLatest(database);
  for (const r of results) console.log(`${r.status === 'Success' ? 'applied' : r.status}: ${r.migrationName}`);
  console.log(results.length ? `${results.length} migration(s) applied` : 'database is up to date');
} finally {
  await database.destroy();
}
