import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { OkResponse } from '../../lib/schemas.js';
import { actorOf } from '../../lib/actor.js';
import { alertReach } from './alert-reach.js';
import { listAudit } from './audit.service.js';
import { listBeacons, stopBeacon } from './beacons.service.js';
import { AlertReach, AlertReachQuery, AuditList, AuditQuery, BeaconList, BeaconOffBody, CreateSignalBody, ListSignalsQuery, Signal, SignalList } from './signals.schemas.js';
import { createSignal, listSignals } from './signals.service.js';

const tags = ['Signals'];

export const signalsRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.post(
    '/v1/signals',
    { config: { idempotent: 201 }, schema: { tags, summary: 'Post a beacon, capture, note, check-in or alert', body: CreateSignalBody, response: { 201: Signal } } },
    async (request, reply) => reply.status(201).send(await createSignal(ctx, actorOf(request), request.body, request.idempotency)),
  );
  app.get(
    '/v1/signals',
    { schema: { tags, summary: 'Stored signals of your orgs, newest first (never beacons)', querystring: ListSignalsQuery, response: { 200: SignalList } } },
    (request) => listSignals(ctx, actorOf(request), request.query),
  );
  app.get(
    '/v1/signals/alert-reach',
    { schema: { tags, summary: 'Who an alert to the org would reach now: members, by push, by email', querystring: AlertReachQuery, response: { 200: AlertReach } } },
    (request) => alertReach(ctx, actorOf(request), request.query.org_id),
  );
  app.get('/v1/signals/beacons', { schema: { tags, summary: 'Last position of every active device of your orgs', response: { 200: BeaconList } } }, (request) =>
    listBeacons(ctx, actorOf(request)),
  );
  app.delete(
    '/v1/signals/beacon',
    { schema: { tags, summary: 'Stop beaconing (writes beacon_off, broadcasts it)', body: BeaconOffBody, response: { 200: OkResponse } } },
    (request) => stopBeacon(ctx, actorOf(request), request.body?.device_id),
  );
  app.get('/v1/audit', { schema: { tags, summary: 'Audit log of an org (admins and owners)', querystring: AuditQuery, response: { 200: AuditList } } }, (request) =>
    listAudit(ctx, actorOf(request), request.query),
  );
};
