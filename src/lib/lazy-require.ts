import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A package loaded on its first use rather than at every start (issue #40; docs/benchmarks.md,
 * "Cold start"): a start imported every package any configuration or request might need, most of
 * its time. `load()` requires the package's CommonJS build synchronously, so a caller needs no
 * `await` (opening a database, connecting to Redis); Node's module cache keeps it after the first.
 * Pass the package's type: `lazyRequire<typeof Pg>('pg')` with `import type * as Pg from 'pg'`.
 */
export function lazyRequire<T>(name: string): () => T {
  return () => require(name) as T;
}
