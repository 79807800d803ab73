import { refusePlainlyPrivate } from '../deliveries/index.js';
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { flag, type Flag } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { conflict, forbidden, invalidField, notFound, resourceLocked } from '../../lib/errors.js';
import { firstFreeSlug, slugify } from '../../lib/slug.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { atLeast, orgAccess } from '../orgs/index.js';
import { findPrimaryOrgId } from '../orgs/index.js';
import { PLAN_LIMITS, assertRoomFor, isLockedAt } from '../orgs/index.js';
import { teamAccess } from '../orgs/index.js';
import { findUserById } from '../users/index.js';
import type { Schedule } from './availability.js';
import * as repo from './event-types.repository.js';
import type { EventTypeRow, PositionedEventType } from './event-types.repository.js';
import type { CreateEventTypeBody, EventType, UpdateEventTypeBody } from './event-types.schemas.js';

/** A Standard Webhooks signing secret: `whsec_` and 24 random bytes in standard base64 (what verifiers decode). */
const webhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** Mon-Fri 09:00-17:00 in the owner's zone, when an event type names no availability. */
export const defaultAvailability = (timezone: string): Schedule => ({
  timezone,
  weekly: (['mon', 'tue', 'wed', 'thu', 'fri'] as const).map((day) => ({ day, start: '09:00', end: '17:00' })),
});

function toEventType(ctx: AppContext, e: EventTypeRow, locked: boolean, bookingPath: string): EventType {
  return {
    id: e.id,
    owner_id: e.owner_id,
    org_id: e.org_id,
    team_id: e.team_id,
    livemode: e.livemode === 1,
    name: e.name,
    slug: e.slug,
    description: e.description,
    duration_minutes: e.duration_minutes,
    location_type: e.location_type,
    location: e.location,
    requires_confirmation: e.requires_confirmation === 1,
    max_advance_days: e.max_advance_days,
    min_notice_hours: e.min_notice_hours,
    buffer_before_minutes: e.buffer_before_minutes,
    buffer_after_minutes: e.buffer_after_minutes,
    max_bookings_per_day: e.max_bookings_per_day,
    slot_interval_minutes: e.slot_interval_minutes,
    availability: e.availability,
    blackout_dates: e.blackout_dates,
    webhook_url: e.webhook_url,
    webhook_secret: e.webhook_secret,
    booking_url: `${ctx.config.publicUrl}${bookingPath}`,
    locked,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

/** Windows must end after they start; the schema cannot compare two fields. */
function checkAvailability(schedule: Schedule | undefined): void {
  schedule?.weekly.forEach((w, i) => {
    if (w.end <= w.start) throw invalidField(`availability.weekly.${i}.end`, 'must be after start');
  });
}

/** What a caller may do with an event type: a personal one is its owner's; a team one is its org's (admins write). */
export interface EventTypeAccess {
  row: PositionedEventType;
  locked: boolean;
  bookingPath: string;
}

/** Lookups shared by the event types of one list: each owner and each team is read once. */
type Memo = Map<string, Promise<unknown>>;
function once<T>(memo: Memo | undefined, key: string, load: () => Promise<T>): Promise<T> {
  if (!memo) return load();
  if (!memo.has(key)) memo.set(key, load());
  return memo.get(key) as Promise<T>;
}

/** The lock state and public path of an event type, from its owner's plan or its team's lock. */
export async function describe(ctx: AppContext, row: PositionedEventType, actor?: Actor, memo?: Memo): Promise<EventTypeAccess> {
  if (row.team_id === null) {
    const owner = await once(memo, `user:${row.owner_id}`, () => findUserById(ctx.db, row.owner_id));
    const limit = PLAN_LIMITS[owner?.plan ?? 'free'].eventTypes;
    return { row, locked: isLockedAt(row.position, limit), bookingPath: `/assign/${owner?.slug ?? ''}/${row.slug}` };
  }
  const teamId = row.team_id;
  const team = await once(memo, `team:${teamId}`, async () => {
    const t = await ctx.db
      .selectFrom('teams')
      .innerJoin('orgs', 'orgs.id', 'teams.org_id')
      .select(['teams.slug as team_slug', 'orgs.slug as org_slug'])
      .where('teams.id', '=', teamId)
      .executeTakeFirstOrThrow();
    return { ...t, locked: actor ? (await teamAccess(ctx, actor, t.org_slug, t.team_slug)).teamLocked : false };
  });
  return { row, locked: team.locked, bookingPath: `/book/${team.org_slug}/${team.team_slug}/${row.slug}` };
}

/** The event type as the caller may see it (same mode; personal: the owner; team: members of its org), else 404. */
export async function visibleEventType(ctx: AppContext, actor: Actor, id: number, write = false): Promise<EventTypeAccess> {
  const row = await repo.findEventType(ctx.db, id);
  if (!row || row.livemode !== flag(actor.mode === 'live')) throw notFound();
  if (row.team_id === null) {
    if (row.owner_id !== actor.userId) throw notFound();
  } else {
    const access = await orgAccess(ctx, actor, { id: row.org_id });
    if (write && !atLeast(access.role, 'admin')) throw forbidden();
  }
  return describe(ctx, row, actor);
}

function rowFields(input: CreateEventTypeBody | UpdateEventTypeBody) {
  const f: Partial<Omit<EventTypeRow, 'id'>> = {};
  if (input.name !== undefined) f.name = input.name.trim();
  if (input.slug !== undefined) f.slug = input.slug;
  if (input.description !== undefined) f.description = input.description;
  if (input.duration_minutes !== undefined) f.duration_minutes = input.duration_minutes;
  if (input.location_type !== undefined) f.location_type = input.location_type;
  if (input.location !== undefined) f.location = input.location === null ? null : input.location.trim() || null;
  if (input.requires_confirmation !== undefined) f.requires_confirmation = flag(input.requires_confirmation);
  if (input.max_advance_days !== undefined) f.max_advance_days = input.max_advance_days;
  if (input.min_notice_hours !== undefined) f.min_notice_hours = input.min_notice_hours;
  if (input.buffer_before_minutes !== undefined) f.buffer_before_minutes = input.buffer_before_minutes;
  if (input.buffer_after_minutes !== undefined) f.buffer_after_minutes = input.buffer_after_minutes;
  if (input.max_bookings_per_day !== undefined) f.max_bookings_per_day = input.max_bookings_per_day;
  if (input.slot_interval_minutes !== undefined) f.slot_interval_minutes = input.slot_interval_minutes;
  if (input.availability !== undefined) f.availability = input.availability;
  if (input.blackout_dates !== undefined) f.blackout_dates = [...new Set(input.blackout_dates)].sort();
  if (input.webhook_url !== undefined) f.webhook_url = input.webhook_url;
  return f;
}

const slugTaken = (err: unknown): never => {
  if (isUniqueViolation(err)) throw conflict('Slug already taken');
  throw err;
};

async function insert(ctx: AppContext, owner: { id: number; timezone: string }, orgId: number, teamId: number | null, livemode: Flag, input: CreateEventTypeBody, taken: Set<string>) {
  checkAvailability(input.availability);
  // Refused at save, not only at delivery (issue 14, item 12); the connect-time guard still applies.
  refusePlainlyPrivate(ctx, 'webhook_url', input.webhook_url);
  const now = iso(ctx.clock.now());
  const id = await repo
    .insertEventType(ctx.db, {
      org_id: orgId,
      owner_id: owner.id,
      team_id: teamId,
      livemode,
      name: input.name.trim(),
      slug: input.slug ?? firstFreeSlug(slugify(input.name, 'meeting'), taken),
      description: null,
      location_type: 'video',
      location: null,
      requires_confirmation: 0,
      max_advance_days: 60,
      min_notice_hours: 0,
      buffer_before_minutes: 0,
      buffer_after_minutes: 0,
      max_bookings_per_day: null,
      slot_interval_minutes: null,
      availability: defaultAvailability(owner.timezone),
      blackout_dates: [],
      webhook_url: null,
      duration_minutes: input.duration_minutes,
      ...rowFields(input),
      webhook_secret: input.webhook_url ? webhookSecret() : null,
      created_at: now,
      updated_at: now,
    })
    .catch(slugTaken);
  return repo.findEventType(ctx.db, id) as Promise<PositionedEventType>;
}

/** A personal event type; the plan caps how many (free 3, starter 10) in each mode. */
export async function createPersonal(ctx: AppContext, actor: Actor, input: CreateEventTypeBody): Promise<EventType> {
  const user = await findUserById(ctx.db, actor.userId);
  const orgId = await findPrimaryOrgId(ctx.db, actor.userId);
  if (!user || orgId === undefined) throw notFound();
  const livemode = flag(actor.mode === 'live');
  assertRoomFor(await repo.countPersonal(ctx.db, user.id, livemode), PLAN_LIMITS[user.plan].eventTypes);
  const mine = await repo.listVisible(ctx.db, user.id, [], livemode);
  const row = await insert(ctx, user, orgId, null, livemode, input, new Set(mine.map((e) => e.slug)));
  const d = await describe(ctx, row, actor);
  return toEventType(ctx, row, d.locked, d.bookingPath);
}

/** A team event type: team admins; the team must not be locked. */
export async function createForTeam(ctx: AppContext, actor: Actor, orgSlug: string, teamSlug: string, input: CreateEventTypeBody): Promise<EventType> {
  const access = await teamAccess(ctx, actor, orgSlug, teamSlug, { role: 'admin', write: true });
  const user = await findUserById(ctx.db, actor.userId);
  const livemode = flag(actor.mode === 'live');
  const existing = await repo.listVisible(ctx.db, -1, [access.team.id], livemode);
  const row = await insert(ctx, { id: actor.userId, timezone: user?.timezone ?? 'UTC' }, access.org.id, access.team.id, livemode, input, new Set(existing.map((e) => e.slug)));
  return toEventType(ctx, row, false, `/book/${orgSlug}/${teamSlug}/${row.slug}`);
}

export async function listEventTypes(ctx: AppContext, actor: Actor): Promise<{ event_types: EventType[] }> {
  const rows = await repo.listVisible(ctx.db, actor.userId, await repo.teamIdsOfMember(ctx.db, actor.userId), flag(actor.mode === 'live'));
  const memo: Memo = new Map();
  const described = await Promise.all(rows.map((row) => describe(ctx, row, actor, memo)));
  return { event_types: described.map((d) => toEventType(ctx, d.row, d.locked, d.bookingPath)) };
}

export async function getEventType(ctx: AppContext, actor: Actor, id: number): Promise<EventType> {
  const d = await visibleEventType(ctx, actor, id);
  return toEventType(ctx, d.row, d.locked, d.bookingPath);
}

export async function updateEventType(ctx: AppContext, actor: Actor, id: number, input: UpdateEventTypeBody): Promise<EventType> {
  const d = await visibleEventType(ctx, actor, id, true);
  if (d.locked) throw resourceLocked();
  checkAvailability(input.availability);
  refusePlainlyPrivate(ctx, 'webhook_url', input.webhook_url);
  const patch = { ...rowFields(input), updated_at: iso(ctx.clock.now()) };
  // A webhook URL gets a signing secret the first time one is set.
  if (input.webhook_url && !d.row.webhook_secret) Object.assign(patch, { webhook_secret: webhookSecret() });
  await repo.updateEventType(ctx.db, id, patch).catch(slugTaken);
  return getEventType(ctx, actor, id);
}

/** Allowed on a locked event type; its bookings are kept. */
export async function deleteEventType(ctx: AppContext, actor: Actor, id: number) {
  await visibleEventType(ctx, actor, id, true);
  await repo.deleteEventType(ctx.db, id);
  return { id, deleted: true };
}

/** The unlocked live event types of a user, for their public profile. */
export async function publicEventTypes(ctx: AppContext, ownerId: number) {
  const rows = await repo.listVisible(ctx.db, ownerId, [], 1);
  const user = await findUserById(ctx.db, ownerId);
  const limit = PLAN_LIMITS[user?.plan ?? 'free'].eventTypes;
  return rows
    .filter((r) => !isLockedAt(r.position, limit))
    .map((r) => ({ id: r.id, name: r.name, slug: r.slug, duration_minutes: r.duration_minutes, location_type: r.location_type }));
}
