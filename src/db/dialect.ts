// The only place that knows how the two engines report errors.

interface DriverError {
  code?: unknown;
  message?: unknown;
}

/** A UNIQUE or PRIMARY KEY violation, optionally on a given column (SQLite names the column; PostgreSQL the constraint). */
export function isUniqueViolation(err: unknown, column?: string): boolean {
  const e = err as DriverError;
  const unique =
    e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  if (!unique || column === undefined) return unique;
  const constraint = (err as { constraint?: unknown }).constraint;
  const detail = `${typeof e.message === 'string' ? e.message : ''} ${typeof constraint === 'string' ? constraint : ''}`;
  return detail.includes(column);
}

/**
 * A FOREIGN KEY violation: a row was written that refers to one deleted meanwhile (a person whose
 * account was deleted while one of their requests was under way; an org deleted likewise).
 */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as DriverError)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
