import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { checkRegistry, loadLine, parseArgs, runBenchmarks, type Benchmark, type RunOptions } from '../../bench/runner.js';

// The rules of `npm run bench`: quick mode checks every benchmark and writes nothing; a full run
// writes docs only when every benchmark passed; any failure is a non-zero exit.
describe('benchmark runner', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'muster-bench-runner-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const outputFile = () => path.join(dir, `benchmarks-${n++}.md`);

  const ran: string[] = [];
  const ok = (name: string): Benchmark => ({ name, run: () => (ran.push(name), Promise.resolve({ name, markdown: `## ${name} figures` })) });
  const failing = (name: string): Benchmark => ({
    name,
    run: () => {
      ran.push(name);
      return Promise.reject(new Error('warm-up of http://127.0.0.1/x: 0 errors, 12 non-2xx answers'));
    },
  });
  const run = (benchmarks: Benchmark[], o: Partial<RunOptions> & { output: string }) => {
    ran.length = 0;
    const printed: string[] = [];
    const logged: string[] = [];
    let load = 1.5;
    const code = runBenchmarks({
      benchmarks,
      quick: false,
      timeoutMs: 60_000,
      print: (m) => printed.push(m.split('\n\nLoad average')[0]!),
      log: (l) => logged.push(l),
      load: () => ({ average: (load += 1), cores: 2 }),
      ...o,
    });
    return code.then((c) => ({ code: c, printed, logged: logged.join('\n') }));
  };

  test('quick mode runs every benchmark, prints their sections, exits 0 and writes no file', async () => {
    const output = outputFile();
    const r = await run([ok('a'), ok('b')], { quick: true, output });
    assert.equal(r.code, 0);
    assert.deepEqual(ran, ['a', 'b']);
    assert.deepEqual(r.printed, ['## a figures', '## b figures']);
    assert.equal(fs.existsSync(output), false);
  });

  test('quick mode exits 1 when one benchmark fails, after running the others, and leaves the docs alone', async () => {
    const output = outputFile();
    fs.writeFileSync(output, 'figures of a full run\n');
    const r = await run([ok('a'), failing('b'), ok('c')], { quick: true, output });
    assert.equal(r.code, 1);
    assert.deepEqual(ran, ['a', 'b', 'c']);
    assert.match(r.logged, /b FAILED: Error: warm-up of .*12 non-2xx/);
    // The summary repeats the failure's first line (CI keeps only the tail of a long log).
    assert.match(r.logged, /FAIL b \([0-9.]+ s\): warm-up of .*12 non-2xx/);
    assert.equal(fs.readFileSync(output, 'utf8'), 'figures of a full run\n');
  });

  test('a full run writes every section, in the order of the registry', async () => {
    const output = outputFile();
    const r = await run([ok('a'), ok('b')], { output });
    assert.equal(r.code, 0);
    const text = fs.readFileSync(output, 'utf8');
    assert.match(text, /^# Benchmarks\n/);
    const section = (name: string, start: string, end: string, busy: boolean) =>
      `<!-- bench:${name} -->\n## ${name} figures\n\nLoad average (1 min) of the machine: ${start} when this benchmark started, ${end} when it ended, on 2 cores` +
      `${busy ? ': other work competed' : '.\n'}`;
    assert.ok(text.includes(section('a', '2.5', '3.5', true)), text);
    assert.ok(text.includes(section('b', '4.5', '5.5', true)), text);
    assert.ok(text.indexOf('bench:a') < text.indexOf('bench:b'));
  });

  test('the load line says when the machine was busy', () => {
    assert.equal(loadLine(0.4, 1.2, 2), 'Load average (1 min) of the machine: 0.4 when this benchmark started, 1.2 when it ended, on 2 cores.');
    assert.match(loadLine(0.4, 2.6, 2), /2\.6 when it ended, on 2 cores: other work competed with the benchmark/);
  });

  test('a full run with a failed benchmark exits 1 and writes nothing', async () => {
    const output = outputFile();
    fs.writeFileSync(output, 'figures of an earlier run\n');
    const r = await run([ok('a'), failing('b')], { output });
    assert.equal(r.code, 1);
    assert.equal(fs.readFileSync(output, 'utf8'), 'figures of an earlier run\n');
  });

  test('a filtered full run replaces its sections and keeps the others', async () => {
    const output = outputFile();
    await run([ok('a'), ok('b')], { output });
    const fresh: Benchmark = { name: 'b', run: () => Promise.resolve({ name: 'b', markdown: '## b again' }) };
    const r = await run([ok('a'), fresh], { output, filter: 'b' });
    assert.equal(r.code, 0);
    assert.deepEqual(ran, []);
    const text = fs.readFileSync(output, 'utf8');
    assert.ok(text.includes('## a figures') && text.includes('## b again') && !text.includes('## b figures'));
  });

  test('the cost table gathers every benchmark\'s rows above the sections, and a filtered run replaces only its own', async () => {
    const output = outputFile();
    const costly = (name: string, cpuUs: number): Benchmark => ({
      name,
      run: () =>
        Promise.resolve({
          name,
          markdown: `## ${name} figures`,
          costs: [
            { work: `GET /${name}`, config: 'SQLite', cpuUs },
            { work: `GET /${name}`, config: 'PostgreSQL + Redis', cpuUs: cpuUs * 2, pgCpuUs: 40, wire: { pgBytes: 900, pgSegments: 2, redisBytes: 120, redisSegments: 1 } },
          ],
          memory: [{ what: 'active device', config: 'SQLite', bytes: 2048 }],
        }),
    });
    await run([costly('a', 100), costly('b', 300)], { output, date: '2026-11-27' });
    let text = fs.readFileSync(output, 'utf8');
    assert.ok(text.indexOf('<!-- bench:costs -->') < text.indexOf('<!-- bench:a -->'), text);
    assert.match(text, /\| GET \/a \| SQLite \| 100 \| - \| - \| - \| - \| - \| a \(2026-11-27\) \|/);
    assert.match(text, /\| GET \/b \| PostgreSQL \+ Redis \| 600 \| 40 \| 900 \| 2\.0 \| 120 \| 1\.0 \| b \(2026-11-27\) \|/);
    assert.match(text, /\| active device \| SQLite \| 2,048 B \| a \(2026-11-27\) \|/);
    await run([costly('a', 100), costly('b', 500)], { output, filter: 'b', date: '2026-11-28' });
    text = fs.readFileSync(output, 'utf8');
    assert.match(text, /\| GET \/a \| SQLite \| 100 \|.*\| a \(2026-11-27\) \|/);
    assert.match(text, /\| GET \/b \| SQLite \| 500 \|.*\| b \(2026-11-28\) \|/);
    assert.ok(!text.includes('| GET /b | SQLite | 300 |'), text);
  });

  test('a section named other than its benchmark fails the run', async () => {
    const wrong: Benchmark = { name: 'a', run: () => Promise.resolve({ name: 'z', markdown: '' }) };
    const r = await run([wrong], { quick: true, output: outputFile() });
    assert.equal(r.code, 1);
    assert.match(r.logged, /a returned a section named z/);
  });

  test('a benchmark that hangs fails the run at the time limit, and the rest do not run beside it', async () => {
    const hanging: Benchmark = { name: 'h', run: () => new Promise<never>(() => undefined) };
    const r = await run([hanging, ok('b')], { quick: true, output: outputFile(), timeoutMs: 20 });
    assert.equal(r.code, 1);
    assert.deepEqual(ran, []);
    assert.match(r.logged, /h still running after/);
    assert.match(r.logged, /2 of 2 benchmarks failed or did not run/);
  });

  test('a filter that matches nothing is an error', async () => {
    await assert.rejects(run([ok('a')], { output: outputFile(), filter: 'zzz' }), /no benchmark name contains "zzz"/);
  });

  test('arguments: --quick and one NAME, in any order; anything else is refused', () => {
    assert.deepEqual(parseArgs([]), { quick: false, filter: undefined });
    assert.deepEqual(parseArgs(['--quick']), { quick: true, filter: undefined });
    assert.deepEqual(parseArgs(['beacons', '--quick']), { quick: true, filter: 'beacons' });
    assert.throws(() => parseArgs(['--quik']), /unknown option --quik/);
    assert.throws(() => parseArgs(['a', 'b']), /one NAME at most/);
  });

  test('the registry must list every NAME.bench.ts file, and only those', () => {
    const benchDir = fs.mkdtempSync(path.join(dir, 'bench-'));
    for (const f of ['a.bench.ts', 'b.bench.ts', 'lib.ts']) fs.writeFileSync(path.join(benchDir, f), '');
    assert.doesNotThrow(() => checkRegistry(benchDir, ['a', 'b']));
    assert.throws(() => checkRegistry(benchDir, ['a']), /not listed b; no file -/);
    assert.throws(() => checkRegistry(benchDir, ['a', 'b', 'c']), /not listed -; no file c/);
  });
});
