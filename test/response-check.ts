import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Response checking for tests (issue #21): every answer a documented route gives is checked
 * against the schema its route declares for that status (exact, then `2xx`/`4xx`..., the same
 * lookup the serialiser uses), before serialisation, on the handler's own value as JSON would
 * carry it. A status the route does not document, or a body that does not match, is recorded;
 * buildTestApp's close() then fails the test file with the list. Routes without a schema, or
 * hidden from the document, are not checked.
 */
export interface ResponseCheck {
  problems: string[];
}

type Schema = Record<string, unknown>;

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const compiled = new WeakMap<object, ValidateFunction>();

function responseSchemaFor(responses: Record<string, unknown>, status: number, contentType: string): Schema | 'undocumented' | 'skip' {
  const entry = (responses[String(status)] ?? responses[`${String(status)[0]}xx`] ?? responses[`${String(status)[0]}XX`] ?? responses.default) as Schema | undefined;
  if (!entry) return 'undocumented';
  const content = entry.content as Record<string, { schema: Schema }> | undefined;
  if (!content || typeof content !== 'object' || (entry.type !== undefined && entry.properties !== undefined)) return entry;
  const type = contentType.split(';')[0]!.trim();
  const media = content[type];
  if (!media) return 'undocumented';
  return /json/.test(type) ? media.schema : 'skip';
}

function validatorOf(app: FastifyInstance, schema: Schema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    for (const [id, shared] of Object.entries(app.getSchemas())) if (!ajv.getSchema(id)) ajv.addSchema(shared as object, id);
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

function check(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, payload: unknown, problems: string[]): void {
  const route = request.routeOptions;
  const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
  if (!route.url || !schema || schema.hide) return;
  const status = reply.statusCode;
  if (status === 204 || status === 304 || (status >= 300 && status < 400)) return;
  const where = `${request.method} ${route.url} answered ${status}`;
  const found = responseSchemaFor(schema.response ?? {}, status, String(reply.getHeader('content-type') ?? 'application/json'));
  if (found === 'skip') return;
  if (found === 'undocumented') {
    problems.push(`${where}, a status (or media type) its schema does not document`);
    return;
  }
  const value: unknown = payload === undefined ? undefined : JSON.parse(JSON.stringify(payload));
  const validate = validatorOf(app, found);
  if (!validate(value)) {
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
    problems.push(`${where} with a body its schema does not allow: ${errors}\n    body: ${JSON.stringify(value).slice(0, 500)}`);
  }
}

/** Checks every serialised answer of `app` (objects; strings and streams pass untouched). */
export function installResponseCheck(app: FastifyInstance): ResponseCheck {
  const result: ResponseCheck = { problems: [] };
  app.addHook('preSerialization', (request, reply, payload, done) => {
    try {
      check(app, request, reply, payload, result.problems);
    } catch (err) {
      result.problems.push(`${request.method} ${request.url}: the response check failed: ${String(err)}`);
    }
    done(null, payload);
  });
  return result;
}
