import type { AppContext } from '../context.js';
import { sweepSilentBeacons } from '../modules/signals/beacons.service.js';
import { sweepSla } from './sla-sweeper.js';

export interface Job {
  name: string;
  intervalMs: number;
  run(ctx: AppContext): Promise<unknown>;
}

/**
 * Runs each job on its interval, never two runs of one job at once; a failing run is logged and
 * the next one tries again. Returns the function that stops them (and waits for running ones).
 */
export function startJobs(ctx: AppContext, jobs: Job[] = defaultJobs(ctx)): () => Promise<void> {
  const running = new Map<string, Promise<unknown>>();
  const timers = jobs.map((job) =>
    setInterval(() => {
      if (running.has(job.name)) return;
      const run = job
        .run(ctx)
        .catch((err: unknown) => ctx.log.error({ err, job: job.name }, 'job failed'))
        .finally(() => running.delete(job.name));
      running.set(job.name, run);
    }, job.intervalMs),
  );
  return async () => {
    timers.forEach(clearInterval);
    await Promise.all(running.values());
  };
}

export const defaultJobs = (ctx: AppContext): Job[] => [
  { name: 'sla-sweeper', intervalMs: ctx.config.slaSweepIntervalMs, run: sweepSla },
  { name: 'beacon-silence', intervalMs: ctx.config.beaconSweepIntervalMs, run: sweepSilentBeacons },
];
