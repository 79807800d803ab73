import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { IdParams } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import { BusyList, BusyQuery, Calendar, CalendarList, CreateCalendarBody, DeletedCalendar, UpdateCalendarBody } from './calendars.schemas.js';
import * as service from './calendars.service.js';

const tags = ['Calendars'];

export const calendarsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/calendars',
    { schema: { tags, summary: 'Connect an ICS feed or a CalDAV account as busy time', body: CreateCalendarBody, response: { 201: Calendar } } },
    async (request, reply) => reply.status(201).send(await service.createCalendar(ctx, actorOf(request), request.body)),
  );
  app.get('/v1/calendars', { schema: { tags, summary: 'Your calendar connections', response: { 200: CalendarList } } }, (request) =>
    service.listCalendars(ctx, actorOf(request)),
  );
  app.get('/v1/calendars/busy', { schema: { tags, summary: 'Busy times your calendars contribute', querystring: BusyQuery, response: { 200: BusyList } } }, (request) =>
    service.busyTimes(ctx, actorOf(request), request.query),
  );
  app.get('/v1/calendars/:id', { schema: { tags, summary: 'One calendar connection', params: IdParams, response: { 200: Calendar } } }, (request) =>
    service.getCalendar(ctx, actorOf(request), request.params.id),
  );
  app.patch(
    '/v1/calendars/:id',
    { schema: { tags, summary: 'Rename, pick busy calendars and the calendar that receives bookings', params: IdParams, body: UpdateCalendarBody, response: { 200: Calendar } } },
    (request) => service.updateCalendar(ctx, actorOf(request), request.params.id, request.body),
  );
  app.delete('/v1/calendars/:id', { schema: { tags, summary: 'Disconnect (its busy times go with it)', params: IdParams, response: { 200: DeletedCalendar } } }, (request) =>
    service.deleteCalendar(ctx, actorOf(request), request.params.id),
  );
  app.post('/v1/calendars/:id/sync', { schema: { tags, summary: 'Read the calendar now', params: IdParams, response: { 200: Calendar } } }, (request) =>
    service.syncNow(ctx, actorOf(request), request.params.id),
  );
};
