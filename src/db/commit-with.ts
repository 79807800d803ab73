import { AsyncLocalStorage } from 'node:async_hooks';
import { CompiledQuery, PostgresDriver, type DatabaseConnection, type TransactionSettings } from 'kysely';

/** One PostgreSQL transaction of withTransaction (transaction.ts): its connection, and what its COMMIT carries. */
export interface CommitCarriage {
  connection: DatabaseConnection | undefined;
  statements: string[];
}

/** Between the statements a COMMIT carries, and before the COMMIT (bench/write-limit.bench.ts splits on it). */
export const CARRIED_SEPARATOR = ';\n';

/** The carriage of the transaction running in this async context (set by withTransaction). */
export const commitCarriage = new AsyncLocalStorage<CommitCarriage>();

/**
 * node-postgres through Kysely, sending a transaction's last statements in the round trip of its
 * COMMIT: `insert ...; commit` as one simple query (no parameters: the statements carry literals).
 * A row every transaction of an org writes (a counter) is locked from its statement to the end of
 * the commit; sent apart, the lock is also held across the answer's way back to Node and the event
 * loop's turn before COMMIT is sent, and the org's other transactions queue behind it.
 *
 * The carriage is found through the async context of the transaction (withTransaction runs Kysely's
 * transaction inside `commitCarriage.run`), and only for the connection its BEGIN went to. A
 * statement that fails ends the query before the COMMIT; Kysely then rolls back, as after a failed
 * COMMIT.
 */
export class CarryingPostgresDriver extends PostgresDriver {
  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const carriage = commitCarriage.getStore();
    if (carriage && carriage.connection === undefined) carriage.connection = connection;
    await super.beginTransaction(connection, settings);
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const carriage = commitCarriage.getStore();
    if (!carriage || carriage.connection !== connection || carriage.statements.length === 0) return super.commitTransaction(connection);
    const text = [...carriage.statements, 'commit'].join(CARRIED_SEPARATOR);
    carriage.statements = [];
    await connection.executeQuery(CompiledQuery.raw(text));
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const carriage = commitCarriage.getStore();
    if (carriage?.connection === connection) carriage.statements = [];
    await super.rollbackTransaction(connection);
  }
}
