import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { isForeignKeyViolation } from '../db/dialect.js';
import { AppError, conflict, notFound, type ErrorBody, type FieldError } from '../lib/errors.js';
import { MAX_DETAILS, partialErrors } from './validation.js';

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

const REQUEST_ERRORS: Record<string, { status: number; body: ErrorBody }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, body: { error: 'Malformed JSON', code: 'bad_request' } },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, body: { error: 'Malformed JSON', code: 'bad_request' } },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, body: { error: 'Payload too large', code: 'payload_too_large' } },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    body: { error: 'Unsupported media type', code: 'unsupported_media_type' },
  },
};

/**
 * Any other refusal by Fastify or a plugin (a Content-Length that does not match, a multipart
 * limit, a header the framework requires): the status is kept, the body is ours by status, and the
 * framework's message (which may echo the path or a header) is only logged.
 */
const BY_STATUS: Record<number, ErrorBody> = {
  400: { error: 'Bad request', code: 'bad_request' },
  404: { error: 'Not found', code: 'not_found' },
  413: { error: 'Payload too large', code: 'payload_too_large' },
  415: { error: 'Unsupported media type', code: 'unsupported_media_type' },
};

/**
 * The router's own refusals, which come before any route (Fastify's `frameworkErrors`): a path
 * that does not decode is 400; a path parameter over the router's length limit (100) is 404,
 * since no record has such an identifier; the body never repeats the path.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  request.log.info({ code: err.code }, 'request refused by the router');
  if (err.code === 'FST_ERR_BAD_URL') void reply.status(400).send({ error: 'Malformed URL', code: 'bad_request' });
  else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') void reply.status(404).send(notFound().toBody());
  else void reply.status(500).send({ error: 'Internal error', code: 'internal' });
}

function messageOf(issue: AjvIssue): string {
  if (issue.keyword === 'required') return 'is required';
  const allowed = issue.params?.allowedValues;
  if (issue.keyword === 'enum' && Array.isArray(allowed)) return `must be one of: ${allowed.join(', ')}`;
  return issue.message ?? 'is invalid';
}

/**
 * One entry per field, in the order ajv found them: `/email` -> `email`, `/weekly/0/start` ->
 * `weekly.0.start`; a missing property names itself. At most MAX_DETAILS fields; `truncated`
 * when there were more, or when validation stopped at the first problem (validation.ts).
 */
export function fieldErrors(issues: AjvIssue[], part: string | undefined): { details: FieldError[]; truncated: boolean } {
  const byField = new Map<string, string>();
  let more = false;
  for (const issue of issues) {
    const segments = (issue.instancePath ?? '').split('/').filter(Boolean);
    const missing = issue.keyword === 'required' ? issue.params?.missingProperty : undefined;
    if (typeof missing === 'string') segments.push(missing);
    const field = segments.join('.') || part || 'body';
    if (byField.has(field)) continue;
    if (byField.size === MAX_DETAILS) {
      more = true;
      break;
    }
    byField.set(field, messageOf(issue));
  }
  return { details: [...byField].map(([field, message]) => ({ field, message })), truncated: more || partialErrors.has(issues) };
}

/** The details alone (the Events API lists them as its `errors`). */
export const toFieldErrors = (issues: AjvIssue[], part: string | undefined): FieldError[] => fieldErrors(issues, part).details;

/** Maps every failure to the bodies of docs/api.md, "Errors"; a 5xx never shows its cause to the client. */
export default fp(
  (app: FastifyInstance) => {
    app.setErrorHandler((err: FastifyError, request, reply) => {
      if (err instanceof AppError) return reply.status(err.status).send(err.toBody());

      if (err.validation) {
        const { details, truncated } = fieldErrors(err.validation, err.validationContext);
        return reply.status(422).send({ error: 'Validation failed', code: 'validation_failed', details, ...(truncated ? { truncated } : {}) });
      }

      const known = err.code ? REQUEST_ERRORS[err.code] : undefined;
      if (known) return reply.status(known.status).send(known.body);
      if (err instanceof SyntaxError && err.statusCode === 400) {
        return reply.status(400).send({ error: 'Malformed JSON', code: 'bad_request' });
      }

      // A write that refers to a row deleted meanwhile (the caller's own account, deleted while this
      // request was under way; an org deleted likewise) is a conflict, not a fault.
      if (isForeignKeyViolation(err)) {
        request.log.info({ err }, 'request refused: it refers to a row deleted meanwhile');
        return reply.status(409).send(conflict('Something this refers to was deleted meanwhile').toBody());
      }

      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        request.log.info({ err }, 'request refused');
        return reply.status(status).send(BY_STATUS[status] ?? BY_STATUS[400]!);
      }

      request.log.error({ err }, 'request failed');
      return reply.status(500).send({ error: 'Internal error', code: 'internal' });
    });

    app.setNotFoundHandler((_request, reply) => reply.status(404).send(notFound().toBody()));
  },
  { name: 'errors' },
);
