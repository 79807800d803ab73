import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import * as bookings from './bookings.service.js';
import { visibleEventType } from './event-types.service.js';
import { personalBookable, teamBookable } from './public.service.js';
import {
  AvailabilityQuery,
  AvailabilityResponse,
  Booking,
  BookingIdParams,
  BookingList,
  CancelBody,
  Cancelled,
  CreateBookingBody,
  ListBookingsQuery,
  PersonalPath,
  PublicBookingBody,
  RescheduleBody,
  SlotsQuery,
  TeamPath,
} from './scheduling.schemas.js';
import { availability, bookableOf } from './slots.service.js';

const tags = ['Bookings'];
const pub = { public: true };
// Bookings take an Idempotency-Key; the stored response commits with the booking.
const once = { idempotent: 201 };
const pubOnce = { ...pub, ...once };

export const bookingsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    '/v1/availability',
    { schema: { tags, summary: 'Open slots of an event type on one day', querystring: AvailabilityQuery, response: { 200: AvailabilityResponse } } },
    async (request) => {
      const { row } = await visibleEventType(ctx, actorOf(request), request.query.event_type_id);
      return availability(ctx, await bookableOf(ctx, row), request.query.date, request.query.timezone);
    },
  );
  app.get(
    '/v1/slots/:username/:event_slug',
    { config: pub, schema: { tags, summary: 'Open slots of a public event type', params: PersonalPath, querystring: SlotsQuery, response: { 200: AvailabilityResponse } } },
    async (request) => availability(ctx, await personalBookable(ctx, request.params.username, request.params.event_slug), request.query.date, request.query.timezone),
  );
  app.get(
    '/v1/slots/:org_slug/:team_slug/:event_slug',
    { config: pub, schema: { tags, summary: 'Open slots of a public team event type', params: TeamPath, querystring: SlotsQuery, response: { 200: AvailabilityResponse } } },
    async (request) =>
      availability(ctx, await teamBookable(ctx, request.params.org_slug, request.params.team_slug, request.params.event_slug), request.query.date, request.query.timezone),
  );

  app.post('/v1/bookings', { config: once, schema: { tags, summary: 'Book a slot', body: CreateBookingBody, response: { 201: Booking } } }, async (request, reply) => {
    const actor = actorOf(request);
    const { row } = await visibleEventType(ctx, actor, request.body.event_type_id);
    return reply.status(201).send(await bookings.createBooking(ctx, await bookableOf(ctx, row), request.body, actor.mode, request.idempotency, request.headers['accept-language']));
  });
  // The public submission forms of the specification: no credential, live mode.
  for (const path of ['/v1/book/:username/:event_slug', '/v1/assign/:username/:event_slug', '/book/:username/:event_slug']) {
    app.post(path, { config: pubOnce, schema: { tags, summary: 'Book a public event type', params: PersonalPath, body: PublicBookingBody, response: { 201: Booking } } }, async (request, reply) => {
      const b = await personalBookable(ctx, request.params.username, request.params.event_slug);
      return reply.status(201).send(await bookings.createBooking(ctx, b, request.body, 'live', request.idempotency, request.headers['accept-language']));
    });
  }
  for (const path of ['/v1/book/:org_slug/:team_slug/:event_slug', '/v1/assign/:org_slug/:team_slug/:event_slug']) {
    app.post(path, { config: pubOnce, schema: { tags, summary: 'Book a team event type (routed to a free member)', params: TeamPath, body: PublicBookingBody, response: { 201: Booking } } }, async (request, reply) => {
      const b = await teamBookable(ctx, request.params.org_slug, request.params.team_slug, request.params.event_slug);
      return reply.status(201).send(await bookings.createBooking(ctx, b, request.body, 'live', request.idempotency, request.headers['accept-language']));
    });
  }

  app.get('/v1/bookings', { schema: { tags, summary: 'Your bookings as host', querystring: ListBookingsQuery, response: { 200: BookingList } } }, (request) =>
    bookings.listBookings(ctx, actorOf(request), request.query),
  );
  app.delete(
    '/v1/bookings/:id',
    { schema: { tags, summary: 'Cancel a booking (host)', params: BookingIdParams, body: CancelBody, response: { 200: Cancelled } } },
    (request) => bookings.cancelAsHost(ctx, actorOf(request), request.params.id, request.body?.reason),
  );
  app.post(
    '/v1/bookings/:id/reschedule',
    { schema: { tags, summary: 'Move a booking to another slot (host); keeps id and status', params: BookingIdParams, body: RescheduleBody, response: { 200: Booking } } },
    (request) => bookings.rescheduleAsHost(ctx, actorOf(request), request.params.id, request.body.start_time, request.body.reason),
  );
};
