import type { Kysely } from 'kysely';
import type { AuditLogTable, DB } from '../../db/schema.js';
import { scoped, type Scope } from '../../db/scope.js';

/** An audit entry, its meta as a value (stored as JSON text). */
export type AuditRow = Omit<AuditLogTable, 'id' | 'meta'> & { id: number; meta: Record<string, unknown> };

export async function writeAudit(db: Kysely<DB>, row: Omit<AuditLogTable, 'id'>): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

export async function listAudit(db: Kysely<DB>, scope: Scope, limit: number, offset: number): Promise<AuditRow[]> {
  const rows = await db.selectFrom('audit_log').selectAll().$call(scoped(scope, 'audit_log')).orderBy('id', 'desc').limit(limit).offset(offset).execute();
  return rows.map((r) => ({ ...r, meta: JSON.parse(r.meta) as Record<string, unknown> }));
}
