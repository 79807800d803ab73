import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eachLimited } from './concurrency.js';

/** A task the test settles by hand: no timers, so the order of events is the code's alone. */
function gate() {
  let open!: () => void;
  let fail!: (err: unknown) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('eachLimited', () => {
  test('runs at most `limit` at once, starting them in order, the next as soon as one ends', async () => {
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const done = eachLimited([0, 1, 2, 3, 4], 2, async (i) => {
      started.push(i);
      running += 1;
      most = Math.max(most, running);
      await gates[i]!.promise;
      running -= 1;
    });
    await turn();
    assert.deepEqual(started, [0, 1]);
    gates[1]!.open();
    await turn();
    assert.deepEqual(started, [0, 1, 2], 'the next starts when one ends, whichever');
    for (const g of gates) g.open();
    await done;
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    assert.equal(most, 2);
  });

  test('a failure does not stop the others; the first failure is thrown once all are done', async () => {
    const gates = Array.from({ length: 4 }, gate);
    const finished: number[] = [];
    let settled = false;
    const done = eachLimited([0, 1, 2, 3], 2, async (i) => {
      await gates[i]!.promise;
      finished.push(i);
    }).finally(() => (settled = true));
    const outcome = assert.rejects(done, /first/);
    gates[0]!.fail(new Error('first'));
    await turn();
    gates[2]!.fail(new Error('second'));
    await turn();
    assert.equal(settled, false, 'still running the others');
    gates[1]!.open();
    gates[3]!.open();
    await outcome;
    assert.deepEqual(finished.sort(), [1, 3]);
  });

  test('nothing to do settles at once; a limit above the count runs each once', async () => {
    await eachLimited([], 4, () => Promise.reject(new Error('never called')));
    const seen: number[] = [];
    await eachLimited([1, 2], 10, async (i) => void seen.push(i));
    assert.deepEqual(seen, [1, 2]);
  });
});
