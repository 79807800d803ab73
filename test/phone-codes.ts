import type { AppContext } from '../src/context.js';

/**
 * Drops the SMS codes queued by `PATCH /v1/auth/me {phone}` (paging's phone proof) before the
 * worker sends them: for tests of other phone alerts that count what reaches the provider.
 */
export async function forgetPhoneCodes(ctx: AppContext): Promise<void> {
  await ctx.db.deleteFrom('outbox').where('topic', '=', 'auth.phone_code').execute();
}
