import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { unauthorized } from '../../lib/errors.js';
import { escapeHtml } from '../../lib/html.js';
import { Nullable, StringEnum } from '../../lib/schemas.js';
import { PAGES_CSS_PATH } from '../pages-assets/index.js';
import { act, actByToken, targetOf, type ActionOutcome } from './actions.js';
import { incidentWords } from './notifications.js';
import { recordCallStatus, smsReply, voiceTwiml, EMPTY_TWIML } from './twilio.js';
import { validTwilioSignature } from './twilio-signature.js';

const pub = { public: true };
const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 300 }) });
const ActionBody = Type.Object({ action: StringEnum(['acknowledge', 'resolve']) });
const ActionResult = Type.Object(
  {
    action: StringEnum(['acknowledge', 'resolve']),
    outcome: StringEnum(['acknowledged', 'already_acknowledged', 'resolved', 'already_resolved'], { description: '`already_resolved`: the incident was resolved before (not an error; nothing changed)' }),
    incident: Type.Object({
      id: Type.Integer(),
      title: Type.String(),
      priority: Type.String(),
      status: Type.String(),
      location_name: Nullable(Type.String()),
      acknowledged_at: Nullable(Type.String()),
      acknowledged_by: Nullable(Type.Integer()),
    }),
  },
  { title: 'PageActionResult' },
);
const xml = { 200: { description: 'TwiML', content: { 'text/xml': { schema: Type.String() } } } };
const html = (what: string) => ({
  200: { description: what, content: { 'text/html': { schema: Type.String() } } },
  404: { description: 'A link that is not valid (forged, altered, or more than a day old)', content: { 'text/html': { schema: Type.String() } } },
});
const VoiceQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 300 })),
  event: Type.Optional(Type.String({ maxLength: 20 })),
  round: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});

/** Twilio's form parameters, strings only (a repeated name keeps its last value). */
function formOf(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof body === 'object' && body !== null) for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * Every request from Twilio carries X-Twilio-Signature over the URL it requested: PUBLIC_URL and
 * the path with its query (behind a proxy the request's own host may differ). 401 otherwise, and
 * when Twilio is not configured (nothing to check it with).
 */
function checkTwilio(ctx: AppContext, request: FastifyRequest): Record<string, string> {
  const params = formOf(request.body);
  const token = ctx.config.twilio?.authToken;
  const signature = request.headers['x-twilio-signature'];
  if (!token || !validTwilioSignature(token, typeof signature === 'string' ? signature : undefined, `${ctx.config.publicUrl}${request.url}`, params)) throw unauthorized();
  return params;
}

const sendXml = (reply: FastifyReply, body: string) => reply.header('cache-control', 'no-store').type('text/xml; charset=utf-8').send(body);

function page(title: string, body: string, mark = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)} · Muster</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml"><link rel="stylesheet" href="${PAGES_CSS_PATH}"></head>
<body class="decision"><main data-testid="page-action">${mark}<p class="eyebrow">Page</p><h1>${escapeHtml(title)}</h1>${body}</main><footer>Muster</footer></body></html>`;
}

const DONE_WORDS: Record<ActionOutcome, string> = {
  acknowledged: 'Acknowledged: it is yours',
  already_acknowledged: 'Already acknowledged',
  resolved: 'Resolved',
  already_resolved: 'Already resolved',
};

/** Twilio's webhooks and the action links of notifications: public, each authenticated by its own signature or token. */
export const pagingPublicRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // Twilio posts forms, and so do the action page's buttons: only these routes accept one.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));

  app.post(
    '/v1/providers/twilio/sms',
    { config: pub, schema: { tags: ['Paging'], summary: "Twilio's inbound message webhook: an SMS reply to a page (4 acknowledges, 6 resolves)", response: xml } },
    async (request, reply) => {
      const p = checkTwilio(ctx, request);
      if (p.AccountSid !== ctx.config.twilio?.accountSid || !p.From) return sendXml(reply, EMPTY_TWIML);
      return sendXml(reply, await smsReply(ctx, p.From, p.Body ?? ''));
    },
  );

  app.post(
    '/v1/providers/twilio/voice',
    { config: pub, schema: { tags: ['Paging'], summary: "A paging call's TwiML, its keys (Gather) and its status callback (Twilio)", querystring: VoiceQuery, response: xml } },
    async (request, reply) => {
      const p = checkTwilio(ctx, request);
      const { token, event, round } = request.query;
      if (token === undefined || p.AccountSid !== ctx.config.twilio?.accountSid) return sendXml(reply, EMPTY_TWIML);
      if (event === 'status') {
        await recordCallStatus(ctx, token, p.CallSid ?? '', p.CallStatus ?? '');
        return sendXml(reply, EMPTY_TWIML);
      }
      return sendXml(reply, await voiceTwiml(ctx, token, p.Digits, round ?? 1));
    },
  );

  app.post(
    '/v1/actions/:token',
    { config: pub, schema: { tags: ['Paging'], summary: 'Acknowledge or resolve as the person paged, with the token of the notification (push action, email link)', params: TokenParams, body: ActionBody, response: { 200: ActionResult } } },
    (request) => actByToken(ctx, request.params.token, request.body.action),
  );

  // The email's link: a page that shows the incident and two buttons. Mail scanners follow links,
  // so its GET never changes anything; the buttons post the form below.
  app.get(
    '/actions/:token',
    { config: pub, schema: { hide: true, params: TokenParams, response: html('The page of a notification: the incident and two buttons') } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').type('text/html; charset=utf-8');
      const target = await targetOf(ctx, request.params.token);
      if (!target) return reply.status(404).send(page('Link not valid', '<p class="hint">This link is not valid, or it is more than a day old. Open the incident in Muster instead.</p>'));
      const i = target.incident;
      const words = `<p>${escapeHtml(incidentWords(i))}</p>`;
      if (i.status === 'resolved' || i.status === 'closed') return reply.send(page(`Incident ${i.id} is already resolved`, `${words}<p class="hint">Nothing more to do.</p>`, '<div class="mark ok" aria-hidden="true">✓</div>'));
      const ack = i.acknowledged_at === null ? '<button class="confirm" type="submit" name="action" value="acknowledge">Acknowledge</button>' : '<p class="hint">Already acknowledged.</p>';
      return reply.send(page(`Incident ${i.id}`, `${words}<form method="post">${ack}<button class="decline" type="submit" name="action" value="resolve">Resolve</button></form>`));
    },
  );
  app.post(
    '/actions/:token',
    { config: pub, schema: { hide: true, params: TokenParams, response: html('The outcome of a button of the notification page') } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').type('text/html; charset=utf-8');
      const action = formOf(request.body).action;
      const target = await targetOf(ctx, request.params.token);
      if (!target || (action !== 'acknowledge' && action !== 'resolve')) return reply.status(404).send(page('Link not valid', '<p class="hint">This link is not valid, or it is more than a day old.</p>'));
      const { outcome, incident } = await act(ctx, target, action);
      return reply.send(page(`Incident ${incident.id}: ${DONE_WORDS[outcome].toLowerCase()}`, `<p>${escapeHtml(incidentWords(incident))}</p>`, '<div class="mark ok" aria-hidden="true">✓</div>'));
    },
  );
};
