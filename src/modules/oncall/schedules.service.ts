import type { AppContext } from '../../context.js';
import type { Role } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { DAY, iso } from '../../lib/clock.js';
import { randomToken } from '../../lib/crypto.js';
import { forbidden, notFound, validationFailed, type FieldError } from '../../lib/errors.js';
import { firstFreeSlug, slugify } from '../../lib/slug.js';
import { atLeast, orgAccess, type OrgAccess } from '../orgs/index.js';
import { listMembers } from '../orgs/index.js';
import { slugConflict } from '../orgs/index.js';
import { loadHistories } from './history.js';
import type { CreateScheduleBody, LayerInput, UpdateScheduleBody } from './oncall.schemas.js';
import { layerStart, resolve, type History, type LayerSpec } from './resolver.js';
import * as repo from './schedules.repository.js';
import { spanOut } from './views.js';

export interface ScheduleAccess extends OrgAccess {
  schedule: repo.ScheduleRow;
}

/**
 * The caller's access to one schedule. Every member reads; admins and owners write (403 for a
 * member, after the schedule is found: an unknown one is 404 to everyone, as for teams).
 */
export async function scheduleAccess(ctx: AppContext, actor: Actor, orgSlug: string, ref: string, need: { role?: Role; write?: boolean } = {}): Promise<ScheduleAccess> {
  const access = await orgAccess(ctx, actor, { slug: orgSlug }, need.write ? { write: true } : {});
  const schedule = await repo.findSchedule(ctx.db, access.org.id, ref);
  if (!schedule) throw notFound();
  if (need.role && !atLeast(access.role, need.role)) throw forbidden();
  return { ...access, schedule };
}

const WRITE = { role: 'admin', write: true } as const;
const LOCAL_OR_OFFSET = 'must be a local date-time (2026-01-05T09:00) or an ISO 8601 time with an offset';

/** Checks the layers against the org and the zone, and gives new ones an id: a 422 names every bad field. */
async function checkLayers(ctx: AppContext, orgId: number, zone: string, input: readonly LayerInput[]): Promise<LayerSpec[]> {
  const members = new Set((await listMembers(ctx.db, orgId)).map((m) => m.user_id));
  const details: FieldError[] = [];
  const given = new Set<string>();
  input.forEach((l, i) => {
    if (l.id === undefined) return;
    if (given.has(l.id)) details.push({ field: `layers.${i}.id`, message: 'is used by another layer' });
    given.add(l.id);
  });
  const layers = input.map((l, i): LayerSpec => {
    const f = `layers.${i}`;
    if (!layerStart(l.start, zone)) details.push({ field: `${f}.start`, message: LOCAL_OR_OFFSET });
    if (l.turn.unit !== 'hour' && l.turn.length > 365) details.push({ field: `${f}.turn.length`, message: `must be at most 365 ${l.turn.unit}s` });
    l.users.forEach((u, j) => {
      if (!members.has(u)) details.push({ field: `${f}.users.${j}`, message: 'is not a member of the org' });
    });
    let id = l.id;
    while (id === undefined || (l.id === undefined && given.has(id))) id = `L${randomToken(6)}`;
    given.add(id);
    const restrictions = (l.restrictions ?? []).map((r) => ({ ...(r.days?.length ? { days: r.days } : {}), start_time: r.start_time, end_time: r.end_time }));
    return { id, name: l.name?.trim() ?? `Layer ${i + 1}`, start: l.start, turn: { unit: l.turn.unit, length: l.turn.length }, users: l.users, restrictions };
  });
  if (details.length > 0) throw validationFailed(details);
  return layers;
}

/** The answer for a schedule: its layers in force now and the gaps of the next 14 days. */
function toSchedule(ctx: AppContext, s: repo.ScheduleRow, h: History | undefined) {
  const now = ctx.clock.nowMs();
  const current = h?.versions.filter((v) => !v.ended && v.from <= now).pop() ?? h?.versions.find((v) => !v.ended);
  const gaps = h ? resolve(h, now, now + 14 * DAY).gaps : [];
  return {
    id: s.id,
    slug: s.slug,
    name: s.name,
    description: s.description,
    time_zone: s.time_zone,
    layers: (current?.layers ?? []).map((l) => ({ ...l, restrictions: l.restrictions ?? [] })),
    layers_effective_from: iso(new Date(current?.from ?? Date.parse(s.created_at))),
    gaps: gaps.map(spanOut),
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

async function answer(ctx: AppContext, s: repo.ScheduleRow) {
  const now = ctx.clock.nowMs();
  const h = (await loadHistories(ctx.db, [s], now, now + 14 * DAY)).get(s.id);
  return toSchedule(ctx, s, h);
}

export async function createSchedule(ctx: AppContext, actor: Actor, orgSlug: string, input: CreateScheduleBody) {
  const access = await orgAccess(ctx, actor, { slug: orgSlug }, WRITE);
  const layers = await checkLayers(ctx, access.org.id, input.time_zone, input.layers);
  const now = iso(ctx.clock.now());
  const id = await ctx
    .transaction(async ({ db }) => {
      const slug = input.slug ?? firstFreeSlug(slugify(input.name, 'schedule'), await repo.slugsOf(db, access.org.id));
      const id = await repo.insertSchedule(db, { org_id: access.org.id, name: input.name.trim(), slug, time_zone: input.time_zone, description: input.description ?? null, now });
      await repo.insertVersion(db, { schedule_id: id, effective_from: now, time_zone: input.time_zone, layers, created_by: actor.userId });
      return id;
    })
    .catch(slugConflict);
  return answer(ctx, (await repo.findScheduleById(ctx.db, id))!);
}

export async function listSchedules(ctx: AppContext, actor: Actor, orgSlug: string) {
  const access = await orgAccess(ctx, actor, { slug: orgSlug });
  const rows = await repo.listSchedules(ctx.db, [access.org.id]);
  const now = ctx.clock.nowMs();
  const histories = await loadHistories(ctx.db, rows, now, now + 14 * DAY);
  return { schedules: rows.map((s) => toSchedule(ctx, s, histories.get(s.id))) };
}

export async function getSchedule(ctx: AppContext, actor: Actor, orgSlug: string, ref: string) {
  return answer(ctx, (await scheduleAccess(ctx, actor, orgSlug, ref)).schedule);
}

/**
 * Name, slug and description change in place. New layers or a new zone take effect now, as a new
 * version: questions about earlier times keep the layers in force then.
 */
export async function updateSchedule(ctx: AppContext, actor: Actor, orgSlug: string, ref: string, input: UpdateScheduleBody) {
  const { schedule, org } = await scheduleAccess(ctx, actor, orgSlug, ref, WRITE);
  const zone = input.time_zone ?? schedule.time_zone;
  const rows = await repo.versionsOf(ctx.db, [schedule.id]);
  const latest = rows[rows.length - 1];
  const versioned = input.layers !== undefined || (input.time_zone !== undefined && input.time_zone !== schedule.time_zone);
  const layers = versioned ? await checkLayers(ctx, org.id, zone, input.layers ?? (latest ? latest.layers : [])) : undefined;
  const now = iso(ctx.clock.now());
  await ctx
    .transaction(async ({ db }) => {
      await repo.updateSchedule(db, schedule.id, {
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(input.slug !== undefined ? { slug: input.slug } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        time_zone: zone,
        updated_at: now,
      });
      if (layers) await repo.insertVersion(db, { schedule_id: schedule.id, effective_from: now, time_zone: zone, layers, created_by: actor.userId });
    })
    .catch(slugConflict);
  return answer(ctx, (await repo.findScheduleById(ctx.db, schedule.id))!);
}

/** Deleted schedules keep their rows (reports and timelines of the past); reads answer 404 from now. */
export async function deleteSchedule(ctx: AppContext, actor: Actor, orgSlug: string, ref: string) {
  const { schedule } = await scheduleAccess(ctx, actor, orgSlug, ref, WRITE);
  const now = iso(ctx.clock.now());
  await repo.updateSchedule(ctx.db, schedule.id, { deleted_at: now, updated_at: now });
  return { id: schedule.id, deleted: true };
}
