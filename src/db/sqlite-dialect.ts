import { CompiledQuery, SqliteAdapter, SqliteDialect, SqliteDriver, type DatabaseConnection, type DialectAdapter, type Driver, type SqliteDialectConfig } from 'kysely';

/**
 * Kysely's SQLite driver opens transactions with a deferred BEGIN, which can fail with
 * SQLITE_BUSY when a reader later upgrades to a writer while another process writes.
 * Every Muster transaction may write, so it takes the write lock up front (BEGIN IMMEDIATE);
 * the busy timeout then makes a second process wait instead of failing.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * SQLite runs DDL inside transactions, which Kysely's adapter does not claim, so its migrator ran
 * every statement of every migration as a commit of its own: with `synchronous = FULL`, an fsync
 * each: a fresh database took 0.96-1.1 s to migrate here, 0.26-0.72 s as one transaction (every test
 * file, every first start). Claimed, a migration run is one transaction: all or nothing, one commit.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}
