// A node:test reporter that writes, as JSON to its destination, how long each test file ran: from
// its first event to its last (the file's own work; its process start comes before). scripts/test.mjs
// prints the slowest files of a run above its summary, so a slow CI run shows where its time went.
import path from 'node:path';

export default async function* fileTimesReporter(source) {
  const spans = {};
  for await (const event of source) {
    if (!event.data?.file) continue;
    // The compiled copy (.test-build/run-N/x.test.js) and its source (x.test.ts, through source maps) are one file.
    const file = path.relative(process.cwd(), event.data.file).replace(/^\.test-build\/run-\d+\//, '').replace(/\.js$/, '.ts');
    const now = Date.now();
    const span = (spans[file] ??= { first: now, last: now });
    span.last = now;
  }
  yield `${JSON.stringify(Object.fromEntries(Object.entries(spans).map(([f, s]) => [f, s.last - s.first])))}\n`;
}
