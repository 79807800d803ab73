// What an object literal costs on this Node, by how it is built (docs/architecture.md, "Object spread on
// hot paths"): a spread followed by added properties against Object.assign, a spread after the
// properties, and a literal written out. Not part of `npm run bench`: it prints its figures.
//
//   npx tsx bench/spread-cost.ts [--n 300000]

const args = process.argv.slice(2);
const N = Number(args[args.indexOf('--n') + 1] ?? 0) || 300_000;

const row = { id: 1, email: 'a@example.com', name: 'Ada', slug: 'ada', plan: 'free', timezone: 'UTC' };
type Row = typeof row;

const cases: Record<string, (o: Row) => object> = {
  'spread, then 1 property   { ...o, x }': (o) => ({ ...o, x: 1 }),
  'spread, then 4 properties { ...o, x, y, z, w }': (o) => ({ ...o, x: 1, y: 2, z: 3, w: 4 }),
  'spread, then assigned     r = { ...o }; r.x = 1': (o) => {
    const r: Record<string, unknown> = { ...o };
    r.x = 1;
    return r;
  },
  'Object.assign({}, o, { x })': (o) => Object.assign({}, o, { x: 1 }),
  'properties, then spread   { x, ...o }': (o) => ({ x: 1, ...o }),
  'written out               { id: o.id, ..., x }': (o) => ({ id: o.id, email: o.email, name: o.name, slug: o.slug, plan: o.plan, timezone: o.timezone, x: 1 }),
};

let sink: object | undefined;
for (let round = 1; round <= 2; round++) {
  console.log(`round ${round} (${N.toLocaleString('en-US')} objects each; the first round includes warm-up):`);
  for (const [name, make] of Object.entries(cases)) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < N; i++) sink = make(row);
    const ns = Number(process.hrtime.bigint() - start) / N;
    console.log(`  ${name.padEnd(50)} ${ns.toFixed(0).padStart(6)} ns`);
  }
}
if (!sink) throw new Error('unreachable');
console.log(`Node ${process.version}, V8 ${process.versions.v8}`);
