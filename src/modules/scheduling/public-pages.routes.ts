import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { DAY, iso } from '../../lib/clock.js';
import { invalidField, notFound } from '../../lib/errors.js';
import { Nullable } from '../../lib/schemas.js';
import { verifyToken } from '../../lib/signing.js';
import { isTimeZone } from '../../lib/timezone.js';
import { findUserById, PublicProfile, SlugParams } from '../users/index.js';
import { isValidDate } from './availability.js';
import { findBooking } from './bookings.repository.js';
import { findEventType, type PositionedEventType } from './event-types.repository.js';
import { LocationTypeSchema } from './event-types.schemas.js';
import { personalBookable, publicProfile, teamBookable } from './public.service.js';
import { AvailabilityResponse, PersonalPath, SlotsQuery, TeamPath, TokenParams } from './scheduling.schemas.js';
import { slotsFor, type Bookable } from './slots.service.js';

const tags = ['Bookings'];
const pub = { public: true };

/** What a booking page shows about an event type: public facts only (no webhook, no email, no schedule). */
export const PublicEventType = Type.Object({
  event_type_id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  duration_minutes: Type.Integer(),
  location_type: LocationTypeSchema,
  location: Nullable(Type.String({ description: "the event type's address or video link, when given" })),
  requires_confirmation: Type.Boolean(),
  min_notice_hours: Type.Integer(),
  max_advance_days: Type.Integer(),
  host_name: Type.String({ description: 'personal: the owner; team: the team (on a booking: its host)' }),
  team_name: Nullable(Type.String()),
  org_name: Nullable(Type.String()),
  booking_path: Type.String({ description: 'the canonical public page of the event type' }),
  bookable_from: Type.String({ description: 'now plus the minimum notice (UTC): no slot starts earlier' }),
  bookable_until: Type.String({ description: 'now plus the maximum advance (UTC): no slot starts later' }),
}, { title: 'PublicEventType', description: 'What a booking page shows of an event type' });

async function publicFacts(ctx: AppContext, et: PositionedEventType, hostId?: number) {
  let hostName: string;
  let teamName: string | null = null;
  let orgName: string | null = null;
  let bookingPath: string;
  if (et.team_id === null) {
    const owner = await findUserById(ctx.db, et.owner_id);
    hostName = owner?.name ?? '';
    bookingPath = `/book/${owner?.slug ?? ''}/${et.slug}`;
  } else {
    const t = await ctx.db
      .selectFrom('teams')
      .innerJoin('orgs', 'orgs.id', 'teams.org_id')
      .select(['teams.name as team_name', 'teams.slug as team_slug', 'orgs.name as org_name', 'orgs.slug as org_slug'])
      .where('teams.id', '=', et.team_id)
      .executeTakeFirstOrThrow();
    teamName = t.team_name;
    orgName = t.org_name;
    hostName = t.team_name;
    bookingPath = `/book/${t.org_slug}/${t.team_slug}/${et.slug}`;
  }
  if (hostId !== undefined) hostName = (await findUserById(ctx.db, hostId))?.name ?? hostName;
  const now = ctx.clock.now().getTime();
  return {
    event_type_id: et.id,
    name: et.name,
    slug: et.slug,
    description: et.description,
    duration_minutes: et.duration_minutes,
    location_type: et.location_type,
    location: et.location,
    requires_confirmation: et.requires_confirmation === 1,
    min_notice_hours: et.min_notice_hours,
    max_advance_days: et.max_advance_days,
    host_name: hostName,
    team_name: teamName,
    org_name: orgName,
    booking_path: bookingPath,
    bookable_from: iso(new Date(now + et.min_notice_hours * 3_600_000)),
    bookable_until: iso(new Date(now + et.max_advance_days * DAY)),
  };
}

/** A locked event type has no public page: the same 404 as a missing one. */
function live(b: Bookable): Bookable {
  if (b.locked) throw notFound();
  return b;
}

/** The booking behind an attendee's manage token, with its event type, or 404. */
async function managed(ctx: AppContext, token: string) {
  const id = verifyToken(ctx.secret, 'manage', token);
  const booking = id ? await findBooking(ctx.db, id) : undefined;
  const et = booking && booking.event_type_id !== null ? await findEventType(ctx.db, booking.event_type_id) : undefined;
  if (!booking || !et) throw notFound();
  return { booking, et };
}

/**
 * Read endpoints of the public pages: what the booking page shows about an event type, and what the
 * attendee's management page needs to move a booking (the event's facts and its open slots).
 */
export const publicPagesRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/u/:slug',
    {
      config: { public: true },
      schema: { tags: ['Users'], summary: 'Public profile', params: SlugParams, response: { 200: PublicProfile } },
    },
    (request) => publicProfile(ctx, request.params.slug),
  );
  app.get(
    '/v1/book/:username/:event_slug',
    { config: pub, schema: { tags, summary: 'Public facts of a personal event type (the booking page)', params: PersonalPath, response: { 200: PublicEventType } } },
    async (request) => publicFacts(ctx, live(await personalBookable(ctx, request.params.username, request.params.event_slug)).et),
  );
  app.get(
    '/v1/book/:org_slug/:team_slug/:event_slug',
    { config: pub, schema: { tags, summary: 'Public facts of a team event type (the booking page)', params: TeamPath, response: { 200: PublicEventType } } },
    async (request) => publicFacts(ctx, live(await teamBookable(ctx, request.params.org_slug, request.params.team_slug, request.params.event_slug)).et),
  );
  app.get(
    '/v1/bookings/manage/:token/event',
    { config: pub, schema: { tags, summary: "The event type of an attendee's booking (management page)", params: TokenParams, response: { 200: PublicEventType } } },
    async (request) => {
      const { booking, et } = await managed(ctx, request.params.token);
      return publicFacts(ctx, et, booking.host_id);
    },
  );
  app.get(
    '/v1/bookings/manage/:token/slots',
    {
      config: pub,
      schema: { tags, summary: "Slots the attendee's booking may move to (its host, the booking itself not counted as busy)", params: TokenParams, querystring: SlotsQuery, response: { 200: AvailabilityResponse } },
    },
    async (request) => {
      const { booking, et } = await managed(ctx, request.params.token);
      const { date, timezone = 'UTC' } = request.query;
      if (!isValidDate(date)) throw invalidField('date', 'must be a real date as YYYY-MM-DD');
      if (!isTimeZone(timezone)) throw invalidField('timezone', 'must be an IANA time zone');
      const movable = booking.status === 'confirmed' || booking.status === 'pending';
      const slots = movable ? await slotsFor(ctx, ctx.db, { et, hostIds: [booking.host_id], locked: false }, date, timezone, booking.id) : [];
      return {
        date,
        event_type_id: et.id,
        timezone,
        slots: slots.filter((s) => s.start !== Date.parse(booking.start_time)).map((s) => ({ start_time: iso(new Date(s.start)), end_time: iso(new Date(s.end)) })),
      };
    },
  );
};
