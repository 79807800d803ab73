import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import { StringEnum } from '../../lib/schemas.js';
import { toFieldErrors } from '../../plugins/errors.js';
import type { Trigger } from './lifecycle.js';
import { priorityMapOf } from './integrations.service.js';
import type { IntegrationRow } from './integrations.repository.js';

// PagerDuty Events API v2 (developer.pagerduty.com, "Send an Alert Event"; PagerDuty/developer-docs
// docs/events-API-v2/02-Trigger-Events.md): the body, its limits (dedup_key 255, summary 1024,
// the whole event 512 KB) and its answers.
export const EVENT_BODY_LIMIT = 512 * 1024;

const Text = (maxLength: number) => Type.String({ maxLength });
export const PdEvent = Type.Object({
  routing_key: Type.Optional(Type.String({ maxLength: 200, description: 'the integration key (required on /v2/enqueue)' })),
  event_action: StringEnum(['trigger', 'acknowledge', 'resolve']),
  dedup_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  payload: Type.Optional(
    Type.Object({
      summary: Type.String({ minLength: 1, maxLength: 1024, pattern: '\\S' }),
      source: Type.String({ minLength: 1, maxLength: 1024, pattern: '\\S' }),
      severity: StringEnum(['critical', 'error', 'warning', 'info']),
      timestamp: Type.Optional(Text(64)),
      component: Type.Optional(Text(1024)),
      group: Type.Optional(Text(1024)),
      class: Type.Optional(Text(1024)),
      custom_details: Type.Optional(Type.Unknown()),
    }),
  ),
  links: Type.Optional(Type.Array(Type.Object({ href: Text(2048), text: Type.Optional(Text(1024)) }), { maxItems: 50 })),
  images: Type.Optional(Type.Array(Type.Object({ src: Text(2048), href: Type.Optional(Text(2048)), alt: Type.Optional(Text(1024)) }), { maxItems: 50 })),
  client: Type.Optional(Text(1024)),
  client_url: Type.Optional(Text(2048)),
});
export type PdEvent = Static<typeof PdEvent>;

export const PdAccepted = Type.Object({ status: Type.String(), message: Type.String(), dedup_key: Type.String() });

/** PagerDuty's invalid-event answer, plus Muster's `error`/`code` so every error body reads alike. */
export const PdRejected = Type.Object({
  status: Type.String(),
  message: Type.String(),
  errors: Type.Array(Type.String()),
  error: Type.String(),
  code: Type.String(),
});

export function invalidEvent(errors: string[]): AppError {
  return new AppError(400, 'bad_request', 'Event object is invalid', { details: errors.map((message) => ({ field: '', message })) });
}

/** Rules a schema cannot say: a trigger needs its payload; acknowledge and resolve need the dedup_key. */
export function checkEvent(e: PdEvent): void {
  if (e.event_action === 'trigger' && !e.payload) throw invalidEvent(["'payload' is missing"]);
  if (e.event_action !== 'trigger' && !e.dedup_key) throw invalidEvent(["'dedup_key' is missing or blank"]);
}

function describe(e: PdEvent): string {
  const p = e.payload!;
  const lines = [`Source: ${p.source}`];
  for (const [k, v] of [['Component', p.component], ['Group', p.group], ['Class', p.class], ['Timestamp', p.timestamp], ['Client', e.client]] as const) {
    if (v) lines.push(`${k}: ${v}`);
  }
  if (p.custom_details !== undefined) lines.push('', 'Details:', JSON.stringify(p.custom_details, null, 2));
  for (const l of e.links ?? []) lines.push(`Link: ${l.text ? `${l.text} ` : ''}${l.href}`);
  for (const i of e.images ?? []) lines.push(`Image: ${i.src}`);
  if (e.client_url) lines.push(`Client URL: ${e.client_url}`);
  return lines.join('\n').slice(0, 20_000);
}

/** A trigger event as Muster's trigger; a missing dedup_key becomes a fresh UUID (PagerDuty does the same). */
export function triggerOf(integration: IntegrationRow, e: PdEvent): Trigger {
  const p = e.payload!;
  return {
    ref: e.dedup_key ?? randomUUID(),
    title: p.summary,
    description: describe(e),
    priority: priorityMapOf(integration)[p.severity],
    source: 'alert',
    tool: 'events_api',
    data: { summary: p.summary.slice(0, 200), severity: p.severity },
  };
}

const FRAMEWORK: Record<string, [number, string, string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'bad_request', 'Malformed JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'bad_request', 'Malformed JSON'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large', 'Payload too large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [400, 'bad_request', 'Content-Type must be application/json'],
};

/**
 * The error handler of the Events API routes: PagerDuty tools read `status`, `message` and
 * `errors`, so every refusal speaks that shape (400 for any invalid event, 422s included).
 */
export function pagerDutyErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  let status = 500;
  let code = 'internal';
  let errors: string[] = ['Internal error'];
  if (err.validation) {
    [status, code] = [400, 'bad_request'];
    errors = toFieldErrors(err.validation, err.validationContext).map((d) => `'${d.field}' ${d.message}`);
  } else if (err instanceof AppError && err.status === 409) {
    // Not an answer the Events API documents, and tools do not retry a 4xx; they do retry a 429.
    // (A trigger racing resolves of its key is retried in the server until it applies: dedup.ts.)
    [status, code, errors] = [429, 'rate_limited', [err.message]];
    reply.header('retry-after', '1');
  } else if (err instanceof AppError) {
    [status, code] = [err.status === 422 ? 400 : err.status, err.code];
    errors = err.extra.details?.map((d) => (d.field ? `'${d.field}' ${d.message}` : d.message)) ?? [err.message];
  } else if (err.code && FRAMEWORK[err.code]) {
    const [s, c, m] = FRAMEWORK[err.code]!;
    [status, code, errors] = [s, c, [m]];
  } else if (err instanceof SyntaxError) {
    [status, code, errors] = [400, 'bad_request', ['Malformed JSON']];
  } else {
    request.log.error({ err }, 'request failed');
  }
  const message = status === 400 ? 'Event object is invalid' : status === 401 ? 'Invalid routing key' : (errors[0] ?? 'Error');
  const pdStatus = status === 400 ? 'invalid event' : status === 401 ? 'unauthorized' : status === 429 ? 'throttle event' : 'error';
  return reply.status(status).send({ status: pdStatus, message, errors, error: message, code });
}
