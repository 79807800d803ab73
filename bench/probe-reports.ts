// Where a report's time goes: seeds as `npm run bench -- reports` does (sizes as the mode says), then
// times each report's requests, each computed (`Cache-Control: no-cache`).
//   npx tsx bench/probe-reports.ts [--quick] [PostgreSQL]
import { runEngine } from './reports.bench.js';

const engine = process.argv.includes('PostgreSQL') ? 'PostgreSQL' : 'SQLite';
await runEngine(engine, () => false, false, async (muster, urls, headers) => {
  for (const url of urls) {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      // Computed for each request, never a stored answer.
      const res = await muster.app.inject({ url, headers: { ...headers, 'cache-control': 'no-cache' } });
      times.push(performance.now() - t);
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
    }
    console.log(`${times.map((t) => t.toFixed(1)).join(' / ')} ms  ${url.replace(/^.*reports\//, '')}`);
  }
});
process.exit(0);
