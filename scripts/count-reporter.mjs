// A node:test reporter that writes the run's totals as JSON to its destination: the figures node
// prints at the end of a run (`# tests`, `# pass`, `# fail`, `# cancelled`, `# skipped`, `# todo`),
// taken from its final diagnostics, so scripts/test.mjs can add up its runs into one summary line.
export default async function* countReporter(source) {
  const totals = {};
  for await (const event of source) {
    if (event.type !== 'test:diagnostic' || event.data.nesting !== 0) continue;
    const m = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ([\d.]+)$/.exec(event.data.message);
    if (m) totals[m[1]] = Number(m[2]);
  }
  yield `${JSON.stringify(totals)}\n`;
}
