import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { actorOf } from '../../lib/actor.js';
import { OrgParams } from '../orgs/index.js';
import { rotateScheduleFeed, scheduleFeedIcs, scheduleFeedUrl } from './feeds.js';
import {
  CreateOverrideBody,
  CreateScheduleBody,
  Deleted,
  FeedParams,
  FeedUrl,
  MyShiftList,
  OnCall,
  OnCallQuery,
  OrgOnCall,
  Override,
  OverrideList,
  OverrideParams,
  RangeQuery,
  Schedule,
  ScheduleList,
  ScheduleParams,
  ShiftList,
  Timeline,
  UpdateScheduleBody,
} from './oncall.schemas.js';
import { myShifts, onCallAt, orgOnCall, scheduleShifts, scheduleTimeline } from './oncall.service.js';
import { createOverride, deleteOverride, listOverrides } from './overrides.service.js';
import { calendarFeed } from './user-feed.js';
import * as schedules from './schedules.service.js';

const tags = ['On call'];
const base = '/v1/orgs/:org_slug/schedules';
const one = `${base}/:schedule`;

export const oncallRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    base,
    { schema: { tags, summary: 'Create an on-call schedule (admins and owners)', params: OrgParams, body: CreateScheduleBody, response: { 201: Schedule } } },
    async (request, reply) => reply.status(201).send(await schedules.createSchedule(ctx, actorOf(request), request.params.org_slug, request.body)),
  );
  app.get(base, { schema: { tags, summary: "The org's schedules", params: OrgParams, response: { 200: ScheduleList } } }, (request) =>
    schedules.listSchedules(ctx, actorOf(request), request.params.org_slug),
  );
  app.get(one, { schema: { tags, summary: 'A schedule, with the gaps of the next 14 days', params: ScheduleParams, response: { 200: Schedule } } }, (request) =>
    schedules.getSchedule(ctx, actorOf(request), request.params.org_slug, request.params.schedule),
  );
  app.patch(
    one,
    { schema: { tags, summary: 'Change a schedule; new layers take effect now (admins and owners)', params: ScheduleParams, body: UpdateScheduleBody, response: { 200: Schedule } } },
    (request) => schedules.updateSchedule(ctx, actorOf(request), request.params.org_slug, request.params.schedule, request.body),
  );
  app.delete(one, { schema: { tags, summary: 'Delete a schedule; its history is kept (admins and owners)', params: ScheduleParams, response: { 200: Deleted } } }, (request) =>
    schedules.deleteSchedule(ctx, actorOf(request), request.params.org_slug, request.params.schedule),
  );

  app.get(`${one}/on-call`, { schema: { tags, summary: 'Who is on call at an instant (default now)', params: ScheduleParams, querystring: OnCallQuery, response: { 200: OnCall } } }, (request) =>
    onCallAt(ctx, actorOf(request), request.params.org_slug, request.params.schedule, request.query.at),
  );
  app.get('/v1/orgs/:org_slug/on-call', { schema: { tags, summary: 'Every schedule of the org with who is on call now and next', params: OrgParams, response: { 200: OrgOnCall } } }, (request) =>
    orgOnCall(ctx, actorOf(request), request.params.org_slug),
  );
  app.get(`${one}/shifts`, { schema: { tags, summary: 'The final schedule over a range (at most 93 days)', params: ScheduleParams, querystring: RangeQuery, response: { 200: ShiftList } } }, (request) =>
    scheduleShifts(ctx, actorOf(request), request.params.org_slug, request.params.schedule, request.query),
  );
  app.get(
    `${one}/timeline`,
    { schema: { tags, summary: 'Each layer alone, the overrides and the final schedule over a range (at most 93 days)', params: ScheduleParams, querystring: RangeQuery, response: { 200: Timeline } } },
    (request) => scheduleTimeline(ctx, actorOf(request), request.params.org_slug, request.params.schedule, request.query),
  );
  app.get('/v1/auth/me/shifts', { schema: { tags, summary: 'Your shifts in every schedule of your orgs (at most 93 days)', querystring: RangeQuery, response: { 200: MyShiftList } } }, (request) =>
    myShifts(ctx, actorOf(request), request.query),
  );

  app.post(
    `${one}/overrides`,
    { schema: { tags, summary: 'Put someone on call in place of every layer for a window (admins and owners)', params: ScheduleParams, body: CreateOverrideBody, response: { 201: Override } } },
    async (request, reply) => reply.status(201).send(await createOverride(ctx, actorOf(request), request.params.org_slug, request.params.schedule, request.body)),
  );
  app.get(`${one}/overrides`, { schema: { tags, summary: 'Overrides overlapping a range (default the next 14 days)', params: ScheduleParams, querystring: RangeQuery, response: { 200: OverrideList } } }, (request) =>
    listOverrides(ctx, actorOf(request), request.params.org_slug, request.params.schedule, request.query),
  );
  app.delete(`${one}/overrides/:id`, { schema: { tags, summary: 'End an override now (admins and owners)', params: OverrideParams, response: { 200: Deleted } } }, (request) =>
    deleteOverride(ctx, actorOf(request), request.params.org_slug, request.params.schedule, request.params.id),
  );

  app.get(`${one}/feed`, { schema: { tags, summary: "The schedule's private calendar feed link", params: ScheduleParams, response: { 200: FeedUrl } } }, (request) =>
    scheduleFeedUrl(ctx, actorOf(request), request.params.org_slug, request.params.schedule),
  );
  app.post(`${one}/feed/rotate`, { schema: { tags, summary: 'Revoke the feed link and make a new one (admins and owners)', params: ScheduleParams, response: { 200: FeedUrl } } }, (request) =>
    rotateScheduleFeed(ctx, actorOf(request), request.params.org_slug, request.params.schedule),
  );
  app.get(
    '/calendar/schedules/:token',
    {
      config: { public: true },
      schema: {
        tags,
        summary: "A schedule's final shifts as an ICS feed, the last 30 days and the next 90 (the secret link from .../feed)",
        params: FeedParams,
        response: { 200: { description: 'An iCalendar feed (RFC 5545)', content: { 'text/calendar': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const ics = await scheduleFeedIcs(ctx, request.params.token.replace(/\.ics$/, ''));
      return reply.header('cache-control', 'private, max-age=300').header('referrer-policy', 'no-referrer').type('text/calendar; charset=utf-8').send(ics);
    },
  );

  // The user's own calendar feed (its link: GET /v1/calendar, modules/deliveries).
  app.get(
    '/calendar/:token',
    {
      config: { public: true },
      schema: {
        tags: ['Calendar'],
        summary: 'Your upcoming bookings as an ICS feed (the secret link from GET /v1/calendar; `.ics` may end it)',
        params: Type.Object({ token: Type.String({ minLength: 1, maxLength: 300 }) }),
        response: { 200: { description: 'An iCalendar feed (RFC 5545)', content: { 'text/calendar': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
    const ics = await calendarFeed(ctx, request.params.token.replace(/\.ics$/, ''));
    return reply.header('cache-control', 'private, max-age=300').header('referrer-policy', 'no-referrer').type('text/calendar; charset=utf-8').send(ics);
  });
};
