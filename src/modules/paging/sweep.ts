import type { AppContext } from '../../context.js';
import { sendDueNotifications } from './notifications.js';
import { walkDue } from './walk.js';

/**
 * One paging run: the walks' due steps (which page people), then the notifications due (which queue
 * deliveries). Every step and notification is claimed with a conditional update, so any number of
 * runs, on any number of instances, take each once. The scheduler runs it every
 * PAGING_SWEEP_INTERVAL_MS; a commit that made something due wakes it at once (pagingWaker).
 */
export async function runPaging(ctx: AppContext): Promise<number> {
  return (await walkDue(ctx)) + (await sendDueNotifications(ctx));
}

/**
 * This instance's immediate paging runs: `wake` (after a commit that made a level or a notification
 * due now) starts a run, or, while one runs, one more after it, so an alert's first notification is
 * queued milliseconds after its request rather than at the next sweep. `idle` answers when no run is
 * going (tests and shutdown await it).
 */
export function pagingWaker() {
  let running: Promise<void> | undefined;
  let again = false;
  const wake = (ctx: AppContext): void => {
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await runPaging(ctx);
        } catch (err) {
          ctx.log.error({ err }, 'paging run failed');
        }
      } while (again);
    })().finally(() => {
      running = undefined;
    });
  };
  const idle = async (): Promise<void> => {
    while (running) await running;
  };
  return { wake, idle };
}
