import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import { apiKeysRoutes } from './modules/api-keys/index.js';
import { authRoutes } from './modules/auth/index.js';
import { accountRoutes } from './modules/auth/index.js';
import { accountsRoutes } from './modules/auth/index.js';
import { deliveriesRoutes } from './modules/deliveries/index.js';
import { dispatchRoutes } from './modules/dispatch/index.js';
import { incidentsRoutes } from './modules/incidents/index.js';
import { ingestRoutes } from './modules/integrations/index.js';
import { integrationsRoutes } from './modules/integrations/index.js';
import { inboundEmailRoutes } from './modules/inbound-email/index.js';
import { orgsRoutes } from './modules/orgs/index.js';
import { invitesRoutes } from './modules/orgs/index.js';
import { pagesAssetsRoutes } from './modules/pages-assets/index.js';
import { calendarsRoutes } from './modules/calendars/index.js';
import { bookingLinksRoutes } from './modules/scheduling/index.js';
import { publicPagesRoutes } from './modules/scheduling/index.js';
import { publicPageExists } from './modules/scheduling/index.js';
import { bookingsRoutes } from './modules/scheduling/index.js';
import { eventTypesRoutes } from './modules/scheduling/index.js';
import { signalsRoutes } from './modules/signals/index.js';
import { switchOffMember } from './modules/signals/index.js';
import { streamAccessCheck, streamsRoutes } from './modules/streams/index.js';
import { uploadsRoutes } from './modules/uploads/index.js';
import { teamsRoutes } from './modules/orgs/index.js';
import { healthRoutes } from './modules/system/index.js';
import { usersRoutes } from './modules/users/index.js';
import { webRoutes } from './modules/web/index.js';
import { devicesRoutes } from './modules/devices/index.js';
import { tracksRoutes } from './modules/tracks/index.js';
import { reportsRoutes } from './modules/reports/index.js';
import { trackersRoutes } from './modules/trackers/index.js';
import { webConfigRoutes } from './modules/web/index.js';
import { metricsRoutes } from './modules/metrics/index.js';
import { retentionRoutes } from './modules/retention/index.js';
import { privacyRoutes } from './modules/privacy/index.js';
import { oncallRoutes } from './modules/oncall/index.js';
import { pagingPublicRoutes, pagingRoutes } from './modules/paging/index.js';
import { subscriptionsRoutes } from './modules/subscriptions/index.js';
import { incidentReportRoutes, oncallReportRoutes } from './modules/reports/index.js';
import { sitesRoutes } from './modules/sites/index.js';
import { invalidField } from './lib/errors.js';
import { fieldWithNul } from './lib/nul.js';
import authPlugin from './plugins/auth.js';
import csrfPlugin from './plugins/csrf.js';
import errorsPlugin, { frameworkErrors } from './plugins/errors.js';
import idempotencyPlugin from './plugins/idempotency.js';
import { installJsonParser } from './plugins/json-body.js';
import openapiPlugin from './plugins/openapi.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import securityHeadersPlugin from './plugins/security-headers.js';
import { buildSerializer } from './plugins/shared-compilers.js';
import { installValidators } from './plugins/validation.js';
import { installRouteFacts, routeOf } from './plugins/route.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** A caller's X-Request-Id when it is sane (it ends up in logs), else a fresh UUID. */
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** How often Node looks for requests past their timeouts: a tenth of the headers' timeout, between 50 ms and 1 s. */
export const connectionsCheckingInterval = (headersTimeoutMs: number) => Math.min(1_000, Math.max(50, Math.floor(headersTimeoutMs / 10)));

/** Builds the HTTP application on a context: plugins first, then each module's routes, in order. */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log,
    genReqId: requestId,
    // A child logger carrying the request id per request, unless nothing is logged (LOG_LEVEL=silent):
    // making one stringifies its bindings, a cost every request paid for no line.
    childLoggerFactory: (logger, bindings, options) => (logger.level === 'silent' ? logger : logger.child(bindings, options)),
    requestIdHeader: false,
    bodyLimit: ctx.config.bodyLimit,
    trustProxy: ctx.config.trustProxy,
    // Slow-loris guard: a request must arrive whole within 30 s, its headers within 10 s
    // (REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS). Idle sockets are not cut (live streams). Node
    // enforces both only when it checks its connections, every 30 s by default, which let headers
    // take 14.6 s and bodies 43 s (issue #31): it checks every tenth of the headers' timeout, at
    // most every second, so each is cut within that much of its figure.
    requestTimeout: ctx.config.requestTimeoutMs,
    http: { headersTimeout: ctx.config.headersTimeoutMs, connectionsCheckingInterval: connectionsCheckingInterval(ctx.config.headersTimeoutMs) },
    // Longer than the usual load balancer idle timeout (60 s), so the proxy closes first.
    keepAliveTimeout: 72_000,
    // On shutdown, idle keep-alive sockets close at once and in-flight requests finish.
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    // The router's refusals (bad URL, over-long parameter) answer the error contract too.
    frameworkErrors,
    // Response serialisers compiled once per process, whatever the number of apps (shared-compilers.ts).
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  installRouteFacts(app);
  installValidators(app);
  // JSON everywhere: a text body is refused with 415 instead of being parsed as a string.
  app.removeContentTypeParser('text/plain');
  // JSON bodies nesting deeper than MAX_JSON_DEPTH are refused before they are parsed.
  installJsonParser(app);
  // A request without a body is validated as `{}`: routes whose body fields are all optional
  // (cancel, stop beacon) accept it, and required fields are named one by one instead of "body".
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.headers['content-type'] === undefined && routeOf(request).schema?.body) request.body = {};
    // U+0000 in any text (path, query, JSON body) is a 422 on both engines; PostgreSQL would fail with a 500.
    // Part by part (params, query, body, as one walk would), skipping the absent ones: no object per request.
    const { params, query, body } = request;
    const nul =
      (params === undefined || params === null ? undefined : fieldWithNul(params, 'params')) ??
      (query === undefined || query === null ? undefined : fieldWithNul(query, 'query')) ??
      (body === undefined || body === null ? undefined : fieldWithNul(body, 'body'));
    if (nul) return done(invalidField(nul.replace(/^(params|query|body)\./, ''), 'must not contain the NUL character'));
    done();
  });

  // Open streams are checked again periodically and after a gap in the access notices (modules/streams).
  ctx.events.hub.checkAccessWith(streamAccessCheck(ctx));
  // Open streams never finish on their own: end them first so close() can wait for the rest.
  app.addHook('preClose', (done) => {
    ctx.events.hub.disconnectAll();
    done();
  });

  await app.register(errorsPlugin);
  await app.register(openapiPlugin, { ctx });
  await app.register(authPlugin, { ctx });
  // After auth, in this order: count the request, refuse cross-site cookie writes, claim its
  // Idempotency-Key (preHandler); security headers on every answer (onSend).
  await app.register(rateLimitPlugin, { ctx });
  await app.register(csrfPlugin, { ctx });
  await app.register(idempotencyPlugin, { ctx });
  await app.register(securityHeadersPlugin, { ctx });
  // GET /metrics and the request histogram's onResponse hook (before the routes it times).
  await app.register(metricsRoutes, { ctx });

  await app.register(healthRoutes, { ctx });
  await app.register(pagesAssetsRoutes);
  await app.register(accountsRoutes, { ctx });
  await app.register(usersRoutes, { ctx });
  await app.register(authRoutes, { ctx });
  await app.register(accountRoutes, { ctx });
  await app.register(apiKeysRoutes, { ctx });
  await app.register(orgsRoutes, { ctx, memberRemoved: (userId, orgId) => switchOffMember(ctx, userId, orgId) });
  await app.register(invitesRoutes, { ctx });
  await app.register(teamsRoutes, { ctx });
  await app.register(incidentsRoutes, { ctx });
  await app.register(dispatchRoutes, { ctx });
  // On-call schedules (issue #35): schedules, overrides, who is on call, shifts, feeds.
  await app.register(oncallRoutes, { ctx });
  await app.register(pagingRoutes, { ctx });
  await app.register(subscriptionsRoutes, { ctx });
  // Reports (issue #39): figures over incidents and pages, computed in the database.
  await app.register(incidentReportRoutes, { ctx });
  await app.register(oncallReportRoutes, { ctx });
  // Encapsulated: its form parser stays with Twilio's webhooks and the action page.
  await app.register(pagingPublicRoutes, { ctx });
  await app.register(signalsRoutes, { ctx });
  await app.register(streamsRoutes, { ctx });
  // Sites (geofences, issue #38).
  await app.register(sitesRoutes, { ctx });
  await app.register(eventTypesRoutes, { ctx });
  await app.register(deliveriesRoutes, { ctx });
  await app.register(bookingsRoutes, { ctx });
  await app.register(calendarsRoutes, { ctx });
  // Encapsulated: its form parser stays with the confirm and decline pages.
  await app.register(bookingLinksRoutes, { ctx });
  // Read endpoints of the public booking and management pages.
  await app.register(publicPagesRoutes, { ctx });
  // Not wrapped in fastify-plugin: its multipart parser stays inside the upload routes.
  await app.register(uploadsRoutes, { ctx });
  // The front end (dashboard, field terminal, booking and management pages, /embed.js).
  await app.register(webConfigRoutes, { ctx });
  await app.register(webRoutes, { pageExists: publicPageExists(ctx) });
  await app.register(devicesRoutes, { ctx });
  await app.register(tracksRoutes, { ctx });
  await app.register(reportsRoutes, { ctx });
  // Encapsulated: its form parser stays with the tracker routes. Owns `/` (OsmAnd fixes, else /app/).
  await app.register(trackersRoutes, { ctx });
  // Incident sources: the integrations API and the endpoints monitoring tools post to.
  await app.register(integrationsRoutes, { ctx });
  await app.register(inboundEmailRoutes, { ctx });
  await app.register(ingestRoutes, { ctx });
  // Operations (issue #22): retention settings, a person's export and deletion.
  await app.register(retentionRoutes, { ctx });
  await app.register(privacyRoutes, { ctx });

  return app;
}
