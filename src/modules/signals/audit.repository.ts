import type { Kysely } from 'kysely';
import type { AuditLogTable, DB } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

export type AuditRow = Omit<AuditLogTable, 'id'> & { id: number };

export async function writeAudit(db: Kysely<DB>, row: Omit<AuditLogTable, 'id'>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

export async function listAudit(db: Kysely<DB>, scope: Scope, limit: number, offset: number): Promise<AuditRow[]> {
  return db.selectFrom('audit_log').selectAll().$call(scoped(scope, 'audit_log')).orderBy('id', 'desc').limit(limit).offset(offset).execute();
}
