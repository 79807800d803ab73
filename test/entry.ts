// How a test starts one of the repository's TypeScript entry points (the server, a CLI) in a child
// process. `npm test` runs the suites compiled to JavaScript under .test-build/<run>/ (scripts/test.mjs):
// the child then runs the compiled file beside it; a test file run alone through tsx starts the
// child under tsx.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const compiled = here.endsWith('.js');
/** The root the entry points are found under: the repository, or the compiled copy of it. */
const BASE = path.resolve(path.dirname(here), '..');
/** The repository itself (the compiled copy lives in its .test-build/<run>/ folder). */
export const REPO_ROOT = compiled ? path.resolve(BASE, '..', '..') : BASE;

/** Node's arguments that run `entry`, a path from the repository root such as 'src/server.ts'. */
export function entryArgs(entry: string): string[] {
  return compiled ? ['--enable-source-maps', path.join(BASE, entry.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', path.join(BASE, entry)];
}
