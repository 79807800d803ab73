// What the two bundles built with esbuild share: the test build (scripts/compile-tests.mjs) and the
// server's (scripts/bundle-server.mjs).
import fs from 'node:fs';
import path from 'node:path';

/**
 * Packages left for node to load from node_modules: native addons, and packages that find files of
 * their own next to their code (worker threads, static assets), which a bundle would move. mailauth:
 * bundled, its verification answered every inbound message 451.
 */
export const SERVER_EXTERNAL = ['better-sqlite3', '@node-rs/argon2', 'sharp', 'pg-native', 'pino', 'thread-stream', '@fastify/swagger-ui', 'mailauth'];

/** Bundled CommonJS calls require() for node's own modules: an ES module bundle defines it. */
const REQUIRE_BANNER = "import { createRequire as __musterCreateRequire } from 'node:module'; const require = __musterCreateRequire(import.meta.url);";

/** esbuild's options of both bundles: one ES module for Node 20 with its packages, source maps beside it. */
export const BUNDLE_OPTIONS = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  mainFields: ['module', 'main'],
  banner: { js: REQUIRE_BANNER },
  logLevel: 'warning',
};

/**
 * An esbuild plugin: in each TypeScript source that reads `import.meta.url`, the expression becomes
 * `urlOf(relative path of the source, .ts -> .js)`, an expression for the URL the file has outside
 * the bundle (its compiled copy), so paths relative to a source file (the built pages, the calendar
 * worker, a spawned entry point) resolve as they do unbundled.
 */
export function importMetaUrlPlugin(urlOf) {
  return {
    name: 'unbundled-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await fs.promises.readFile(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const rel = path.relative(process.cwd(), args.path).replace(/\.ts$/, '.js');
        return { contents: source.replaceAll('import.meta.url', urlOf(rel)), loader: 'ts' };
      });
    },
  };
}
