import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { escapeHtml } from '../../lib/html.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import * as bookings from './bookings.service.js';
import { PAGES_CSS_PATH } from '../pages-assets/index.js';
import { findUserById } from '../users/index.js';
import { findEventType } from './event-types.repository.js';
import { Type } from '@sinclair/typebox';
import { Booking, CancelBody, RescheduleBody, TokenParams } from './scheduling.schemas.js';

const tags = ['Bookings'];
const pub = { public: true };

/** The decision links answer a page for browsers, or the booking as JSON (`Accept: application/json`). */
const decisionAnswer = {
  200: {
    description: 'The booking after the decision (JSON), or the page (HTML): for a GET without `Accept: application/json`, the page asking to confirm',
    content: { 'application/json': { schema: Booking }, 'text/html': { schema: Type.String() } },
  },
  409: { $ref: 'ErrorResponse#' },
};


function page(title: string, body: string, mark = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)} · Muster</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml"><link rel="stylesheet" href="${PAGES_CSS_PATH}"></head>
<body class="decision"><main>${mark}<p class="eyebrow">Booking request</p><h1>${escapeHtml(title)}</h1>${body}</main><footer>Scheduling by Muster</footer></body></html>`;
}

/** The booking as its host reads it on the decision pages: times in the host's own zone. */
async function details(ctx: AppContext, b: bookings.Booking): Promise<string> {
  const [et, host] = await Promise.all([
    b.event_type_id === null ? undefined : findEventType(ctx.db, b.event_type_id),
    findUserById(ctx.db, b.host_id),
  ]);
  const zone = host?.timezone ?? 'UTC';
  const day = new Intl.DateTimeFormat('en-US', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: zone }).format(new Date(b.start_time));
  const time = (iso: string) => new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit', timeZone: zone }).format(new Date(iso));
  const row = (label: string, value: string) => `<dt>${label}</dt><dd>${value}</dd>`;
  return `<dl>${et ? row('What', escapeHtml(et.name)) : ''}${row('When', `${escapeHtml(day)}<br>${escapeHtml(time(b.start_time))} – ${escapeHtml(time(b.end_time))} <small>${escapeHtml(zone)}</small>`)}${row(
    'Attendee',
    `${escapeHtml(b.attendee_name)}<br><small>${escapeHtml(b.attendee_email)}</small>`,
  )}${b.notes ? row('Notes', escapeHtml(b.notes)) : ''}${row('Status', `<span class="pill ${b.status}">${b.status}</span>`)}</dl>`;
}

const wantsJson = (request: FastifyRequest) => (request.headers.accept ?? '').includes('application/json');

/**
 * Confirm and decline links arrive by email, where scanners open every link: a browser's GET
 * shows a page whose button POSTs the decision; a client asking for JSON acts at once.
 * Repeating a decision answers the same result; the opposite one after it is 409.
 */
async function decide(ctx: AppContext, token: string, json: boolean, reply: FastifyReply, decision: 'confirm' | 'decline', act: boolean) {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  if (!act) {
    const b = await bookings.manageViewByConfirmToken(ctx, token).catch(htmlError(reply));
    if (!b) return reply;
    const verb = decision === 'confirm' ? 'Confirm' : 'Decline';
    const note =
      b.status === 'pending'
        ? `<p class="hint">${decision === 'confirm' ? 'The attendee gets a confirmation by email.' : 'The attendee is told by email that the time is not available.'}</p>`
        : `<p class="hint">This booking is already ${b.status}.</p>`;
    return reply
      .type('text/html; charset=utf-8')
      .send(page(`${verb} this booking?`, `${await details(ctx, b)}<form method="post"><button class="${decision}" type="submit">${verb} booking</button></form>${note}`));
  }
  if (json) return bookings.confirmByToken(ctx, token, decision);
  const b = await bookings.confirmByToken(ctx, token, decision).catch(htmlError(reply));
  if (!b) return reply;
  const confirmed = b.status === 'confirmed';
  return reply
    .type('text/html; charset=utf-8')
    .send(
      page(
        confirmed ? 'Booking confirmed' : 'Booking declined',
        `${await details(ctx, b)}<p class="hint">The attendee has been emailed.</p>`,
        `<div class="mark ${confirmed ? 'ok' : 'no'}" aria-hidden="true">${confirmed ? '✓' : '✕'}</div>`,
      ),
    );
}

/** Errors of the HTML forms as pages (JSON clients get the usual bodies). */
function htmlError(reply: FastifyReply) {
  return (err: unknown): undefined => {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    void reply.status(err.status).type('text/html; charset=utf-8').send(page(err.status === 404 ? 'Link not valid' : 'Not possible', `<p>${escapeHtml(err.message)}</p>`));
    return undefined;
  };
}

export const bookingLinksRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // The decision pages post an empty HTML form; only these routes accept one.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, _body, done) => done(null, {}));

  for (const decision of ['confirm', 'decline'] as const) {
    const path = `/v1/bookings/:token/${decision}`;
    app.get(path, { config: pub, schema: { tags, summary: `${decision === 'confirm' ? 'Confirm' : 'Decline'} a pending booking (host link)`, params: TokenParams, response: decisionAnswer } }, (request, reply) =>
      decide(ctx, request.params.token, wantsJson(request), reply, decision, wantsJson(request)),
    );
    app.post(path, { config: pub, schema: { tags, summary: `${decision === 'confirm' ? 'Confirm' : 'Decline'} (the page's form)`, params: TokenParams, response: decisionAnswer } }, (request, reply) =>
      decide(ctx, request.params.token, wantsJson(request), reply, decision, true),
    );
  }

  app.get('/v1/bookings/manage/:token', { config: pub, schema: { tags, summary: "The attendee's view of their booking", params: TokenParams, response: { 200: Booking } } }, (request) =>
    bookings.manageView(ctx, request.params.token),
  );
  app.post(
    '/v1/bookings/manage/:token/cancel',
    { config: pub, schema: { tags, summary: 'Cancel (attendee link)', params: TokenParams, body: CancelBody, response: { 200: Booking } } },
    (request) => bookings.cancelByToken(ctx, request.params.token, request.body?.reason),
  );
  app.post(
    '/v1/bookings/manage/:token/reschedule',
    { config: pub, schema: { tags, summary: 'Move to another slot (attendee link)', params: TokenParams, body: RescheduleBody, response: { 200: Booking } } },
    (request) => bookings.rescheduleByToken(ctx, request.params.token, request.body.start_time, request.body.reason),
  );
};
