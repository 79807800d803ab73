// `npm run db:backup -- FILE` and `npm run db:restore -- FILE` (SQLite; PostgreSQL: pg_dump, see docs/operations.md).
import { ConfigError, loadConfig } from '../config.js';
import { BackupError, backupSqlite, restoreSqlite } from './backup.js';

const [command, file] = process.argv.slice(2);
try {
  if ((command !== 'backup' && command !== 'restore') || !file) throw new BackupError('usage: npm run db:backup -- FILE | npm run db:restore -- FILE');
  const config = loadConfig();
  if (config.databaseUrl) throw new BackupError('DATABASE_URL is set: back up PostgreSQL with pg_dump (docs/operations.md)');
  if (command === 'backup') {
    const r = backupSqlite(config.dataDir, file);
    console.log(`backed up to ${r.file} (${r.bytes} bytes, ${r.uploads} upload(s) beside it)`);
  } else {
    const r = restoreSqlite(config.dataDir, file);
    console.log(`restored ${file} into ${config.dataDir}${r.replaced.length ? `; the replaced files are kept: ${r.replaced.join(', ')}` : ''}`);
  }
} catch (err) {
  if (!(err instanceof BackupError || err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}
