import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { invalidField, notFound } from '../../lib/errors.js';
import { findMember } from '../orgs/index.js';
import { MAX_RANGE, rangeOf } from './queries.js';
import * as repo from './schedules.repository.js';
import { scheduleAccess } from './schedules.service.js';

const WRITE = { role: 'admin', write: true } as const;

const toOverride = (o: repo.OverrideRow) => ({ id: o.id, user_id: o.user_id, start: o.start_time, end: o.end_time, created_at: o.created_at });

/**
 * Puts a member on call in place of every layer for [start, end). The past is not rewritten: an
 * override that ends by now is refused, and one that starts earlier starts now.
 */
export async function createOverride(ctx: AppContext, actor: Actor, orgSlug: string, ref: string, input: { user_id: number; start: string; end: string }) {
  const { schedule, org } = await scheduleAccess(ctx, actor, orgSlug, ref, WRITE);
  const now = ctx.clock.nowMs();
  const start = Date.parse(input.start);
  const end = Date.parse(input.end);
  if (!(end > start)) throw invalidField('end', 'must be after start');
  if (end - start > MAX_RANGE) throw invalidField('end', 'must be at most 93 days after start');
  if (end <= now) throw invalidField('end', 'must be in the future: the past is not rewritten');
  if (!(await findMember(ctx.db, org.id, input.user_id))) throw invalidField('user_id', 'is not a member of the org');
  const row = await ctx.transaction(async ({ db }) => {
    const inserted = await repo.insertOverride(db, {
      schedule_id: schedule.id,
      user_id: input.user_id,
      start_time: iso(new Date(Math.max(start, now))),
      end_time: iso(new Date(end)),
      created_by: actor.userId,
      created_at: iso(new Date(now)),
    });
    await repo.bumpVersion(db, schedule.id);
    return inserted;
  });
  return toOverride(row);
}

/** The overrides overlapping [from, to) (default: the next 14 days), deleted ones left out. */
export async function listOverrides(ctx: AppContext, actor: Actor, orgSlug: string, ref: string, q: { from?: string | undefined; to?: string | undefined }) {
  const { schedule } = await scheduleAccess(ctx, actor, orgSlug, ref);
  const { from, to } = rangeOf(q, ctx.clock.nowMs());
  const rows = await repo.listOverrides(ctx.db, schedule.id, iso(new Date(from)), iso(new Date(to)));
  return { overrides: rows.map(toOverride) };
}

/** Ends an override now: what it changed before now stays in the history. */
export async function deleteOverride(ctx: AppContext, actor: Actor, orgSlug: string, ref: string, id: number) {
  const { schedule } = await scheduleAccess(ctx, actor, orgSlug, ref, WRITE);
  const deleted = await ctx.transaction(async ({ db }) => {
    const done = await repo.deleteOverride(db, schedule.id, id, iso(ctx.clock.now()));
    if (done) await repo.bumpVersion(db, schedule.id);
    return done;
  });
  if (!deleted) throw notFound();
  return { id, deleted: true };
}
