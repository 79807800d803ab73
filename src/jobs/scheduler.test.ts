import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildTestApp, type TestApp } from '../../test/helpers.js';
import { createContext, type AppContext } from '../context.js';
import { ManualTicker } from './manual-ticker.js';
import { TICK_SLACK, claimTick, startJobs } from './scheduler.js';

/** A promise and its resolver, to let a test hold a run open and see when it started. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets every callback already queued (I/O included) run: no time threshold, only an ordering. */
const settle = () => new Promise((r) => setImmediate(r));

// Time is a ManualTicker the tests advance: nothing depends on how busy the machine is
// (this file once failed under load with "run 7 came 19 ms after the previous one").
describe('job scheduler', () => {
  let t: TestApp;
  const logged: { job?: string; msg?: string }[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logged.push(JSON.parse(chunk.toString()) as { job?: string; msg?: string });
        done();
      },
    });
    t = await buildTestApp({}, { log: pino({ level: 'error' }, sink) });
  });
  after(() => t.close());

  test('never runs two runs of one job at once, and stop waits for the running one', async () => {
    const ticker = new ManualTicker();
    let running = 0;
    let most = 0;
    let runs = 0;
    const started = deferred();
    const release = deferred();
    const stop = startJobs(
      t.ctx,
      [
        {
          name: 'slow',
          intervalMs: 10,
          run: async () => {
            running += 1;
            runs += 1;
            most = Math.max(most, running);
            started.resolve();
            await release.promise;
            running -= 1;
          },
        },
      ],
      ticker,
    );
    void ticker.advance(10);
    await started.promise;
    // Ten more intervals pass while the first run is still going: each tick is skipped.
    await ticker.advance(100);
    assert.equal(runs, 1, 'one run at a time');
    // Stop while the run is going: stop clears the timers and must wait for that run.
    let done = false;
    const stopped = stop().then(() => (done = true));
    await settle();
    assert.equal(done, false, 'stop waits for the running run');
    assert.equal(ticker.active, 0, 'no timer is left');
    release.resolve();
    await stopped;
    assert.equal(most, 1);
    await ticker.advance(100);
    assert.equal(runs, 1, 'nothing runs after stop');
  });

  test('a failing run is logged and the next one runs', async () => {
    const ticker = new ManualTicker();
    let runs = 0;
    const stop = startJobs(
      t.ctx,
      [
        {
          name: 'flaky',
          intervalMs: 10,
          run: () => {
            runs += 1;
            return runs === 1 ? Promise.reject(new Error('first run breaks')) : Promise.resolve();
          },
        },
      ],
      ticker,
    );
    for (let i = 0; i < 3; i++) await ticker.advance(10);
    await stop();
    assert.equal(runs, 3);
    const entry = logged.find((l) => l.job === 'flaky');
    assert.equal(entry?.msg, 'job failed');
  });

  describe('several instances on one database', () => {
    let other: AppContext;
    before(async () => {
      // A second instance: its own context (connections, timers) on the same database.
      other = await createContext(t.ctx.config, { log: pino({ level: 'silent' }) });
    });
    after(() => other.close());

    test('of concurrent claims of one tick on two instances exactly one wins; the next tick comes after the interval', async () => {
      const now = Date.now();
      const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => claimTick((i % 2 === 0 ? t.ctx : other).db, 'claimed', 1_000, now)));
      assert.equal(claims.filter(Boolean).length, 1);
      assert.equal(await claimTick(other.db, 'claimed', 1_000, now + 1_000 * TICK_SLACK - 1), false, 'too early');
      const next = await Promise.all([claimTick(t.ctx.db, 'claimed', 1_000, now + 1_000), claimTick(other.db, 'claimed', 1_000, now + 1_000)]);
      assert.equal(next.filter(Boolean).length, 1);
      assert.equal(await claimTick(t.ctx.db, 'another job', 1_000, now), true, 'jobs are claimed separately');
    });

    test('a job scheduled on two instances runs once per tick across both: runs never overlap and are an interval apart', async () => {
      const ticker = new ManualTicker();
      const intervalMs = 40;
      const runs: { at: number; by: string }[] = [];
      let running = 0;
      let overlapped = false;
      const job = (by: string) => ({
        name: 'swept-once',
        intervalMs,
        run: async () => {
          running += 1;
          if (running > 1) overlapped = true;
          runs.push({ at: ticker.now(), by });
          await settle();
          running -= 1;
        },
      });
      const stopA = startJobs(t.ctx, [job('a')], ticker);
      // The second instance started 15 ms later: its timer fires between the first one's ticks.
      await ticker.advance(15);
      const stopB = startJobs(other, [job('b')], ticker);
      // Each step fires one timer of each instance; both claim against the one database.
      for (let i = 0; i < 12; i++) await ticker.advance(intervalMs);
      await Promise.all([stopA(), stopB()]);
      assert.equal(overlapped, false);
      assert.equal(runs.length, 12, `one run per interval (${runs.map((r) => r.by).join('')})`);
      for (let i = 1; i < runs.length; i++) assert.equal(runs[i]!.at - runs[i - 1]!.at, intervalMs, `run ${i}`);
    });

    test('instances whose ticks coincide still run a tick once', async () => {
      const ticker = new ManualTicker();
      const by: string[] = [];
      const job = (name: string) => ({ name: 'coinciding', intervalMs: 50, run: () => Promise.resolve(by.push(name)) });
      const stops = [startJobs(t.ctx, [job('a')], ticker), startJobs(other, [job('b')], ticker)];
      for (let i = 0; i < 10; i++) await ticker.advance(50);
      await Promise.all(stops.map((stop) => stop()));
      assert.equal(by.length, 10, by.join(''));
    });
  });
});
