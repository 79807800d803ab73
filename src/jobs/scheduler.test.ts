import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildTestApp, type TestApp } from '../../test/helpers.js';
import { createContext, type AppContext } from '../context.js';
import { TICK_SLACK, claimTick, startJobs } from './scheduler.js';

const until = async (check: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
};

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
    let running = 0;
    let most = 0;
    let runs = 0;
    const releases: (() => void)[] = [];
    const stop = startJobs(t.ctx, [
      {
        name: 'slow',
        intervalMs: 10,
        run: async () => {
          running += 1;
          runs += 1;
          most = Math.max(most, running);
          await new Promise<void>((r) => releases.push(r));
          running -= 1;
        },
      },
    ]);
    await until(() => runs === 1);
    // Many intervals pass while the first run is still going.
    await new Promise((r) => setTimeout(r, 100));
    const seen = runs;
    // Stop while a run is going: stop clears the timers and must wait for that run.
    const stopped = stop();
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 30));
    const waited = !done;
    releases.forEach((r) => r());
    await stopped;
    assert.equal(seen, 1, 'one run at a time');
    assert.equal(most, 1);
    assert.ok(waited, 'stop waits for the running run');
  });

  test('a failing run is logged and the next one runs', async () => {
    let runs = 0;
    const stop = startJobs(t.ctx, [
      {
        name: 'flaky',
        intervalMs: 10,
        run: () => {
          runs += 1;
          return runs === 1 ? Promise.reject(new Error('first run breaks')) : Promise.resolve();
        },
      },
    ]);
    await until(() => runs >= 3);
    await stop();
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
          runs.push({ at: Date.now(), by });
          await new Promise((r) => setTimeout(r, 5));
          running -= 1;
        },
      });
      const stops = [startJobs(t.ctx, [job('a')]), startJobs(other, [job('b')])];
      await until(() => runs.length >= 12, 10_000);
      await Promise.all(stops.map((stop) => stop()));
      assert.equal(overlapped, false);
      for (let i = 1; i < runs.length; i++) {
        const gap = runs[i]!.at - runs[i - 1]!.at;
        // The claim is TICK_SLACK * interval apart; the runs' own timestamps may wobble by a query's time.
        assert.ok(gap >= intervalMs / 2, `run ${i} came ${gap} ms after the previous one (${runs.map((r) => r.by).join('')})`);
      }
    });
  });
});
