// A node:test reporter that writes, as JSON to its destination, how long each test file's tests ran:
// the durations of its top-level tests and suites added up (a suite's include its hooks, where
// apps are built; the process start and module loading before them are not counted). Events reach
// the reporter file by file, so their arrival times do not tell. scripts/test.mjs prints the slowest
// files of a run above its summary, so a slow CI run shows where its time went.
import path from 'node:path';

export default async function* fileTimesReporter(source) {
  const times = {};
  for await (const event of source) {
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || event.data.nesting !== 0 || !event.data.file) continue;
    // The compiled copy (.test-build/run-N/x.test.js) and its source (x.test.ts, through source maps) are one file.
    const file = path.relative(process.cwd(), event.data.file).replace(/^\.test-build\/run-\d+\//, '').replace(/\.js$/, '.ts');
    times[file] = (times[file] ?? 0) + (event.data.details?.duration_ms ?? 0);
  }
  yield `${JSON.stringify(times)}\n`;
}
