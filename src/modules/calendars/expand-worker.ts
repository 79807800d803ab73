// The worker thread that reads untrusted calendars (started by expand-pool.ts): one job at a time,
// each answered with its intervals or with why it failed.
import { parentPort } from 'node:worker_threads';
import { busyIntervals, CalendarLimitError, type ExpandOptions, type Interval } from './expand.js';

export interface ExpandJob {
  id: number;
  texts: string[];
  options: ExpandOptions;
}

/** `ready` once the worker has loaded (deadlines count the calendar's work, not the worker's start). */
export type ExpandAnswer = { ready: true } | { id: number; intervals: Interval[] } | { id: number; error: string; limit: boolean };

const port = parentPort;
if (!port) throw new Error('expand-worker.ts runs as a worker thread (expand-pool.ts starts it)');
port.on('message', (job: ExpandJob) => {
  let answer: ExpandAnswer;
  try {
    answer = { id: job.id, intervals: busyIntervals(job.texts, job.options) };
  } catch (err) {
    // The worker's stack is bounded too (resourceLimits.stackSizeMb): running out of it is a limit.
    const deep = err instanceof RangeError && /call stack/i.test(err.message);
    const limit = err instanceof CalendarLimitError || deep;
    const error = err instanceof CalendarLimitError ? err.detail : deep ? 'it nests too deeply' : err instanceof Error ? err.message : String(err);
    answer = { id: job.id, limit, error };
  }
  port.postMessage(answer);
});
port.postMessage({ ready: true } satisfies ExpandAnswer);
