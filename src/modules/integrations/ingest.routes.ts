import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, notFound, unauthorized } from '../../lib/errors.js';
import { toFieldErrors } from '../../plugins/errors.js';
import { AlertNotification, AlertsAccepted, alertTrigger, fingerprintOf, type AlertNotification as Notification } from './alerts.js';
import { headline, logEvent, type AlertResult } from './event-log.repository.js';
import { ping } from './heartbeats.js';
import type { HeartbeatRow } from './heartbeats.repository.js';
import type { IntegrationRow } from './integrations.repository.js';
import { integrationByKey } from './integrations.service.js';
import { IntegrationKeyCache } from './key-cache.js';
import type { IntegrationEventSource } from './integrations.tables.js';
import { acknowledge, resolve, trigger } from './lifecycle.js';
import { MaintenanceCache } from './maintenance-cache.js';
import { checkEvent, EVENT_BODY_LIMIT, invalidEvent, PdAccepted, PdEvent, PdRejected, pagerDutyErrors, triggerOf } from './pagerduty.js';

const tags = ['Integrations'];
const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200, description: 'the integration key' }) });
const Pong = Type.Object({ status: Type.Literal('ok') }, { title: 'HeartbeatPing' });

/** The integration a request's key named (with its heartbeat, null when it is not one) and the key itself, to keep it out of the log. */
interface Keyed {
  integration: IntegrationRow;
  heartbeat: HeartbeatRow | null;
  key: string;
}
const found = new WeakMap<FastifyRequest, Keyed>();

/** The key a tool presents: in the URL, else the Events API's `routing_key`, else `Authorization: Bearer <key>` or basic auth (password, else user name). */
function presentedKey(request: FastifyRequest): string | undefined {
  const params = request.params as { key?: string } | undefined;
  if (params?.key) return params.key;
  const body = request.body as { routing_key?: unknown } | undefined;
  if (typeof body?.routing_key === 'string' && body.routing_key) return body.routing_key;
  const auth = request.headers.authorization ?? '';
  const [scheme, value = ''] = auth.split(' ', 2);
  if (scheme?.toLowerCase() === 'bearer') return value.trim() || undefined;
  if (scheme?.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return (colon < 0 ? decoded : decoded.slice(colon + 1) || decoded.slice(0, colon)) || undefined;
  }
  return undefined;
}

const keyedOf = (request: FastifyRequest): Keyed => {
  const keyed = found.get(request);
  if (!keyed) throw unauthorized();
  return keyed;
};

const sourceOf = (request: FastifyRequest): IntegrationEventSource => {
  const url = request.routeOptions.url ?? '';
  return url.endsWith('/alertmanager') ? 'alertmanager' : url.endsWith('/grafana') ? 'grafana' : url.endsWith('/heartbeat') ? 'heartbeat' : 'events_api';
};

/** Why a payload was refused, as the log shows it. */
function reasonOf(err: FastifyError): string {
  if (err.validation) return toFieldErrors(err.validation, err.validationContext).map((d) => `'${d.field}' ${d.message}`).join('; ');
  if (err instanceof AppError && err.extra.details?.length) return err.extra.details.map((d) => (d.field ? `'${d.field}' ${d.message}` : d.message)).join('; ');
  return err.message;
}

/**
 * Where monitoring tools post. Public routes (the key is the credential), checked before the body
 * so a wrong or revoked key is 401 whatever it sent. Every payload of a known integration goes to
 * its event log with what came of it (pings excepted: they are one write each, see heartbeats.ts).
 */
export const ingestRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const keys = new IntegrationKeyCache(ctx.events.bus);
  const windows = new MaintenanceCache(ctx.events.bus, ctx.clock);
  app.addHook('onClose', async () => {
    keys.stop();
    windows.stop();
  });
  const authenticate = async (request: FastifyRequest) => {
    const key = presentedKey(request);
    if (key === undefined && request.routeOptions.url === '/v2/enqueue') throw invalidEvent(["'routing_key' is missing or blank"]);
    const keyed = await integrationByKey(ctx, keys, key);
    if (!keyed) throw unauthorized();
    found.set(request, { ...keyed, key: key! });
  };
  /** A heartbeat integration takes any POST to any of its URLs as a ping (Alertmanager's Watchdog route), answered as that tool expects. */
  const pingHeartbeat = (status: number, answer: object) => async (request: FastifyRequest, reply: FastifyReply) => {
    const keyed = found.get(request);
    if (!keyed?.heartbeat) return undefined;
    await ping(ctx, keyed.integration, keyed.heartbeat);
    return reply.status(status).send(answer);
  };
  /**
   * An event's entry in the transaction `tx`. The Events API writes it in the transaction of the
   * change it reports: the entry and the incident commit together (one commit per event on
   * PostgreSQL, one member of a group on SQLite), and the log never names an incident that was rolled back.
   */
  const recordIn = (tx: Tx, request: FastifyRequest, results: AlertResult[], reason: string | null = null) => {
    const { integration, key } = keyedOf(request);
    return logEvent(tx.db, integration, { source: sourceOf(request), ...headline(results), results, reason, body: request.body }, ctx.clock.now(), key);
  };
  /**
   * The log entry of a rejected event or of an Alertmanager or Grafana notification (its alerts
   * each in a transaction of their own), after what it did: in a transaction of the app's, so on
   * SQLite it joins a group of commits instead of paying a commit (an fsync) of its own per event.
   */
  const record = async (request: FastifyRequest, results: AlertResult[], reason: string | null = null) => {
    try {
      await ctx.transaction((tx) => recordIn(tx, request, results, reason));
    } catch (err) {
      // The tool's event was processed: a log entry lost is not worth a retry of it.
      request.log.error({ err }, 'integration event log');
    }
  };
  app.addHook('onError', async (request, _reply, err) => {
    const keyed = found.get(request);
    if (!keyed || keyed.heartbeat || (err.statusCode ?? 500) >= 500) return;
    await record(request, [{ ref: '', outcome: 'rejected', incident_id: null }], reasonOf(err));
  });
  /** `db`: the app's, or the event's own transaction's (tx.db), where on SQLite the read needs no snapshot of its own. */
  const suppression = async (integration: IntegrationRow, db = ctx.db) => {
    const window = await windows.covering(db, integration, ctx.clock.now());
    return window ? `maintenance window ${window.id}` : null;
  };

  // Events API v2: its own error shape and PagerDuty's 512 KB limit.
  await app.register(async (scope) => {
    const pd = scope.withTypeProvider<TypeBoxTypeProvider>();
    pd.setErrorHandler(pagerDutyErrors);
    const schema = { tags, body: PdEvent, response: { 202: PdAccepted, '4xx': PdRejected } };
    const handle = async (request: FastifyRequest, event: PdEvent) => {
      checkEvent(event);
      const { integration } = keyedOf(request);
      if (event.event_action === 'trigger') {
        const t = triggerOf(integration, event);
        await ctx.transaction(async (tx) => {
          const suppressed = await suppression(integration, tx.db);
          if (suppressed) return recordIn(tx, request, [{ ref: t.ref, outcome: 'suppressed', incident_id: null }], suppressed);
          const placed = await trigger(ctx, integration, t, tx);
          return recordIn(tx, request, [{ ref: t.ref, outcome: placed.created ? 'opened' : 'repeated', incident_id: placed.incident.id }]);
        });
        return { status: 'success', message: 'Event processed', dedup_key: t.ref };
      }
      const ack = event.event_action === 'acknowledge';
      await ctx.transaction(async (tx) => {
        const r = await (ack ? acknowledge : resolve)(ctx, integration, event.dedup_key!, tx);
        await recordIn(tx, request, [{ ref: event.dedup_key!, outcome: r ? (ack ? 'acknowledged' : 'resolved') : 'ignored', incident_id: r?.id ?? null }], r ? null : 'no open incident with this dedup_key');
      });
      return { status: 'success', message: 'Event processed', dedup_key: event.dedup_key! };
    };
    const checks = [authenticate, pingHeartbeat(202, { status: 'success', message: 'Event processed', dedup_key: '' })];
    const options = { config: { public: true }, bodyLimit: EVENT_BODY_LIMIT };
    // With the key in the URL it is checked before the body is read, so a heartbeat takes any POST
    // (whatever its body) as a ping; /v2/enqueue's key is in the body, so it is checked after parsing.
    pd.post('/v1/integrations/:key/events', { ...options, onRequest: checks, schema: { ...schema, params: KeyParams, summary: 'PagerDuty Events API v2 (key in the URL)' } }, async (request, reply) =>
      reply.status(202).send(await handle(request, request.body)),
    );
    pd.post('/v2/enqueue', { ...options, preValidation: checks, schema: { ...schema, summary: 'PagerDuty Events API v2 drop-in (routing_key = integration key)' } }, async (request, reply) =>
      reply.status(202).send(await handle(request, request.body)),
    );
  });

  /** One incident per alert fingerprint: firing triggers (or repeats), resolved resolves; in a maintenance window, firing opens and repeats nothing. */
  const handleAlerts = async (request: FastifyRequest, body: Notification, tool: 'alertmanager' | 'grafana') => {
    const { integration } = keyedOf(request);
    const suppressed = body.alerts.some((a) => a.status !== 'resolved') ? await suppression(integration) : null;
    const alerts = [];
    const results: AlertResult[] = [];
    for (const a of body.alerts) {
      const fingerprint = fingerprintOf(a);
      if (a.status === 'resolved') {
        const r = await resolve(ctx, integration, fingerprint);
        alerts.push({ fingerprint, action: r ? ('resolved' as const) : ('ignored' as const), incident_id: r?.id ?? null });
        results.push({ ref: fingerprint, outcome: r ? 'resolved' : 'ignored', incident_id: r?.id ?? null });
      } else if (suppressed) {
        alerts.push({ fingerprint, action: 'suppressed' as const, incident_id: null });
        results.push({ ref: fingerprint, outcome: 'suppressed', incident_id: null });
      } else {
        const placed = await trigger(ctx, integration, alertTrigger(integration, a, body, tool));
        alerts.push({ fingerprint, action: placed.created ? ('created' as const) : ('repeated' as const), incident_id: placed.incident.id });
        results.push({ ref: fingerprint, outcome: placed.created ? 'opened' : 'repeated', incident_id: placed.incident.id });
      }
    }
    await record(request, results, suppressed);
    return { status: 'success', alerts };
  };
  for (const tool of ['alertmanager', 'grafana'] as const) {
    const schema = { tags, body: AlertNotification, response: { 200: AlertsAccepted } };
    const summary = tool === 'alertmanager' ? "Alertmanager's webhook (version 4)" : "Grafana's webhook contact point";
    // The key is in the URL or a header: checked before the body is read, so a heartbeat takes any POST as a ping.
    const options = { config: { public: true }, onRequest: [authenticate, pingHeartbeat(200, { status: 'success', alerts: [] })] };
    app.post(`/v1/integrations/:key/${tool}`, { ...options, schema: { ...schema, params: KeyParams, summary: `${summary} (key in the URL)` } }, (request) => handleAlerts(request, request.body, tool));
    app.post(`/v1/integrations/${tool}`, { ...options, schema: { ...schema, summary: `${summary} (key as Bearer or basic auth)` } }, (request) => handleAlerts(request, request.body, tool));
  }

  // A heartbeat's own URL: GET, HEAD or POST, whatever the body (never read), is a ping.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => {
      payload.resume();
      payload.on('end', () => done(null, undefined));
      payload.on('error', done);
    });
    const handler = async (request: FastifyRequest) => {
      const { integration, heartbeat } = keyedOf(request);
      if (!heartbeat) throw notFound();
      await ping(ctx, integration, heartbeat);
      return { status: 'ok' as const };
    };
    const route = { config: { public: true }, onRequest: authenticate, schema: { tags, params: KeyParams, response: { 200: Pong } } };
    scope.get('/v1/integrations/:key/heartbeat', { ...route, schema: { ...route.schema, summary: 'Ping a heartbeat (GET or HEAD; 404 when the integration is not a heartbeat)' } }, handler);
    scope.post('/v1/integrations/:key/heartbeat', { ...route, schema: { ...route.schema, summary: 'Ping a heartbeat (any body, never read)' } }, handler);
  });
};
