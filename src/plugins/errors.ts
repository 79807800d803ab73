import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, notFound, type ErrorBody, type FieldError } from '../lib/errors.js';

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

function messageOf(issue: AjvIssue): string {
  if (issue.keyword === 'required') return 'is required';
  const allowed = issue.params?.allowedValues;
  if (issue.keyword === 'enum' && Array.isArray(allowed)) return `must be one of: ${allowed.join(', ')}`;
  return issue.message ?? 'is invalid';
}

/**
 * One entry per field, in the order ajv found them: `/email` -> `email`, `/weekly/0/start` ->
 * `weekly.0.start`; a missing property names itself.
 */
export function toFieldErrors(issues: AjvIssue[], part: string | undefined): FieldError[] {
  const byField = new Map<string, string>();
  for (const issue of issues) {
    const segments = (issue.instancePath ?? '').split('/').filter(Boolean);
    const missing = issue.keyword === 'required' ? issue.params?.missingProperty : undefined;
    if (typeof missing === 'string') segments.push(missing);
    const field = segments.join('.') || part || 'body';
    if (!byField.has(field)) byField.set(field, messageOf(issue));
  }
  return [...byField].map(([field, message]) => ({ field, message }));
}

/** Maps every failure to the bodies of spec/decisions.md; a 5xx never shows its cause to the client. */
export default fp(
  (app: FastifyInstance) => {
    app.setErrorHandler((err: FastifyError, request, reply) => {
      if (err instanceof AppError) return reply.status(err.status).send(err.toBody());

      if (err.validation) {
        const details = toFieldErrors(err.validation, err.validationContext);
        return reply.status(422).send({ error: 'Validation failed', code: 'validation_failed', details });
      }

      const known = err.code ? REQUEST_ERRORS[err.code] : undefined;
      if (known) return reply.status(known.status).send(known.body);
      if (err instanceof SyntaxError && err.statusCode === 400) {
        return reply.status(400).send({ error: 'Malformed JSON', code: 'bad_request' });
      }

      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        request.log.info({ err }, 'request refused');
        return reply.status(status).send({ error: err.message || 'Bad request', code: 'bad_request' });
      }

      request.log.error({ err }, 'request failed');
      return reply.status(500).send({ error: 'Internal error', code: 'internal' });
    });

    app.setNotFoundHandler((_request, reply) => reply.status(404).send(notFound().toBody()));
  },
  { name: 'errors' },
);
