// What the tests that start Debian's prometheus-alertmanager share.
import assert from 'node:assert/strict';

export const ALERTMANAGER_BINARY = '/usr/bin/prometheus-alertmanager';

/** Polls `probe` until it answers something, or fails after `ms` with Alertmanager's log (it works on its own clock). */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, log: () => string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}; Alertmanager said:\n${log().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
