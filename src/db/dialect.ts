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
