// Printed by every build: the gzipped JavaScript and CSS each page loads (its entry and every chunk
// it imports), from Vite's manifest. The field terminal has a budget of 60 KB of gzipped JavaScript.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const out = path.resolve(import.meta.dirname, '../../dist/web');
const manifest = JSON.parse(fs.readFileSync(path.join(out, '.vite/manifest.json'), 'utf8'));
const BUDGET = { 'field.html': 60 * 1024 };

function closure(key, seen = new Set()) {
  if (seen.has(key)) return seen;
  seen.add(key);
  for (const dep of manifest[key]?.imports ?? []) closure(dep, seen);
  return seen;
}
const gz = (file) => zlib.gzipSync(fs.readFileSync(path.join(out, file)), { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

let failed = false;
for (const [key, entry] of Object.entries(manifest)) {
  if (!entry.isEntry) continue;
  const chunks = [...closure(key)].map((k) => manifest[k]);
  const js = chunks.reduce((sum, c) => sum + gz(c.file), 0);
  const css = [...new Set(chunks.flatMap((c) => c.css ?? []))].reduce((sum, f) => sum + gz(f), 0);
  const budget = BUDGET[key];
  const verdict = budget ? (js <= budget ? ` (budget ${kb(budget)}: ok)` : ` (budget ${kb(budget)}: OVER)`) : '';
  if (budget && js > budget) failed = true;
  console.log(`web ${key.padEnd(22)} js ${kb(js).padStart(9)} gzipped, css ${kb(css).padStart(8)} gzipped${verdict}`);
}
if (failed) {
  console.error('a page is over its JavaScript budget');
  process.exit(1);
}
