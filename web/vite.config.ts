// The front end: one Vite build, several pages (dashboard, field terminal, booking, management),
// plus /embed.js as a stable, unhashed script. Output goes to dist/web, served by src/modules/web.
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

const root = import.meta.dirname;
const page = (name: string) => resolve(root, `${name}.html`);

export default defineConfig({
  root,
  base: '/',
  publicDir: resolve(root, 'public'),
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: resolve(root, '../dist/web'),
    emptyOutDir: true,
    manifest: true,
    target: 'es2020',
    reportCompressedSize: false,
    rollupOptions: {
      input: {
        app: page('app'),
        field: page('field'),
        book: page('book'),
        manage: page('manage'),
        embed: resolve(root, 'src/embed/embed.ts'),
        status: resolve(root, 'src/status/status.ts'),
      },
      output: {
        // Stable names for the scripts other pages load by address: /embed.js (other sites), /status.js (the status page).
        entryFileNames: (chunk) => (chunk.name === 'embed' || chunk.name === 'status' ? `${chunk.name}.js` : 'assets/[name]-[hash].js'),
      },
    },
  },
});
