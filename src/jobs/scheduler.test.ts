import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildTestApp, type TestApp } from '../../test/helpers.js';
import { startJobs } from './scheduler.js';

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
});
