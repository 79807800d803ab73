import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { unauthorized } from '../../lib/errors.js';
import { AlertNotification, AlertsAccepted, alertTrigger, fingerprintOf, type AlertNotification as Notification } from './alerts.js';
import type { IntegrationRow } from './integrations.repository.js';
import { integrationByKey } from './integrations.service.js';
import { acknowledge, resolve, trigger } from './lifecycle.js';
import { checkEvent, EVENT_BODY_LIMIT, invalidEvent, PdAccepted, PdEvent, PdRejected, pagerDutyErrors, triggerOf } from './pagerduty.js';

const tags = ['Integrations'];
const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200, description: 'the integration key' }) });
const found = new WeakMap<FastifyRequest, IntegrationRow>();

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

const integrationOf = (request: FastifyRequest): IntegrationRow => {
  const row = found.get(request);
  if (!row) throw unauthorized();
  return row;
};

/**
 * Where monitoring tools post. Public routes (the key is the credential), checked before the body
 * so a wrong or revoked key is 401 whatever it sent.
 */
export const ingestRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  const authenticate = async (request: FastifyRequest) => {
    const key = presentedKey(request);
    if (key === undefined && request.routeOptions.url === '/v2/enqueue') throw invalidEvent(["'routing_key' is missing or blank"]);
    const row = await integrationByKey(ctx, key);
    if (!row) throw unauthorized();
    found.set(request, row);
  };

  // Events API v2: its own error shape and PagerDuty's 512 KB limit.
  await app.register(async (scope) => {
    const pd = scope.withTypeProvider<TypeBoxTypeProvider>();
    pd.setErrorHandler(pagerDutyErrors);
    const schema = { tags, body: PdEvent, response: { 202: PdAccepted, '4xx': PdRejected } };
    const handle = async (request: FastifyRequest, event: PdEvent) => {
      checkEvent(event);
      const integration = integrationOf(request);
      if (event.event_action === 'trigger') {
        const placed = await trigger(ctx, integration, triggerOf(integration, event));
        return { status: 'success', message: 'Event processed', dedup_key: placed.incident.source_ref ?? '' };
      }
      await (event.event_action === 'acknowledge' ? acknowledge : resolve)(ctx, integration, event.dedup_key!);
      return { status: 'success', message: 'Event processed', dedup_key: event.dedup_key! };
    };
    const options = { config: { public: true }, bodyLimit: EVENT_BODY_LIMIT, preValidation: authenticate };
    pd.post('/v1/integrations/:key/events', { ...options, schema: { ...schema, params: KeyParams, summary: 'PagerDuty Events API v2 (key in the URL)' } }, async (request, reply) =>
      reply.status(202).send(await handle(request, request.body)),
    );
    pd.post('/v2/enqueue', { ...options, schema: { ...schema, summary: 'PagerDuty Events API v2 drop-in (routing_key = integration key)' } }, async (request, reply) =>
      reply.status(202).send(await handle(request, request.body)),
    );
  });

  /** One incident per alert fingerprint: firing triggers (or repeats), resolved resolves. */
  const handleAlerts = async (request: FastifyRequest, body: Notification, tool: 'alertmanager' | 'grafana') => {
    const integration = integrationOf(request);
    const alerts = [];
    for (const a of body.alerts) {
      const fingerprint = fingerprintOf(a);
      if (a.status === 'resolved') {
        const r = await resolve(ctx, integration, fingerprint);
        alerts.push({ fingerprint, action: r ? ('resolved' as const) : ('ignored' as const), incident_id: r?.id ?? null });
      } else {
        const placed = await trigger(ctx, integration, alertTrigger(integration, a, body, tool));
        alerts.push({ fingerprint, action: placed.created ? ('created' as const) : ('repeated' as const), incident_id: placed.incident.id });
      }
    }
    return { status: 'success', alerts };
  };
  for (const tool of ['alertmanager', 'grafana'] as const) {
    const schema = { tags, body: AlertNotification, response: { 200: AlertsAccepted } };
    const summary = tool === 'alertmanager' ? "Alertmanager's webhook (version 4)" : "Grafana's webhook contact point";
    const options = { config: { public: true }, preValidation: authenticate };
    app.post(`/v1/integrations/:key/${tool}`, { ...options, schema: { ...schema, params: KeyParams, summary: `${summary} (key in the URL)` } }, (request) => handleAlerts(request, request.body, tool));
    app.post(`/v1/integrations/${tool}`, { ...options, schema: { ...schema, summary: `${summary} (key as Bearer or basic auth)` } }, (request) => handleAlerts(request, request.body, tool));
  }
};
