import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { manageView } from './bookings.service.js';
import { personalBookable, teamBookable } from './public.service.js';

/** 404 is "no"; anything else (a database fault) stays an error. */
async function found(lookup: Promise<unknown>): Promise<boolean> {
  try {
    await lookup;
    return true;
  } catch (err) {
    if (err instanceof AppError && err.status === 404) return false;
    throw err;
  }
}

/**
 * Whether a public page's address names something, so the page shell is served only for what
 * exists and anything else answers a styled 404 (issue 14, item 11): the booking pages by their
 * user or team and event type (the same lookups as their API), the management page by its token.
 */
export function publicPageExists(ctx: AppContext) {
  return (file: string, params: Record<string, string>): Promise<boolean> => {
    if (file === 'manage.html') return found(manageView(ctx, params.token ?? ''));
    if (file !== 'book.html') return Promise.resolve(true);
    const { username, org_slug, team_slug, event_slug } = params;
    return found(org_slug !== undefined ? teamBookable(ctx, org_slug, team_slug ?? '', event_slug ?? '') : personalBookable(ctx, username ?? '', event_slug ?? ''));
  };
}
