import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import { ErrorBody, ErrorResponse, ValidationErrorBody } from '../lib/schemas.js';
import { operationIdOf } from './operation-ids.js';

/**
 * OpenAPI 3.1 generated from the route schemas, then finished in one pass over the document
 * (`finishDocument`) so that routes added later get the same treatment without listing them:
 *
 * - every operation gets its operationId (operation-ids.ts; a deterministic one when unlisted);
 * - every schema with a `title` (Incident, Booking, Error...) becomes a named component and each
 *   place it appears a `$ref` to it;
 * - every operation lists the error statuses it can answer (named responses, below), derived from
 *   what the operation takes: a credential (401, 403 for writes), path parameters (404), input
 *   (422), a body (400, 413, 415), rate limits (429); routes add the rest (409...) in their schema;
 * - security is stated per operation: public routes `security: []`, the rest the three schemes;
 * - query parameters with a default (`limit`, `page`) are optional, their default described.
 */
export default fp(
  async (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
    app.addSchema(ErrorResponse);
    app.addHook('onRoute', (route) => {
      // The interactive docs page and its assets are public.
      if (route.url.startsWith('/docs')) route.config = { ...route.config, public: true };
      if (!route.schema || route.schema.hide) return;
      const schema: FastifySchema & { security?: unknown } = route.schema;
      const response = (schema.response ?? {}) as Record<string, unknown>;
      response['4xx'] ??= { $ref: 'ErrorResponse#' };
      response['5xx'] ??= { $ref: 'ErrorResponse#' };
      if (route.config?.idempotent !== undefined) {
        response[409] ??= { $ref: 'ErrorResponse#' };
        schema.headers ??= IdempotencyHeaders;
      }
      schema.response = response;
      if (route.config?.public) schema.security = [];
    });

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Muster API',
          version: '1.0.0',
          description:
            'Signals, incidents and assignments for field teams. Authenticate with an API key (`x-api-key` or `Authorization: Bearer`) or the `muster_session` cookie. `sk_test_` keys see only test data. A typed TypeScript client is generated from this document (`clients/typescript`).',
          license: { name: 'AGPL-3.0-only', identifier: 'AGPL-3.0-only' },
        },
        servers: [{ url: ctx.config.publicUrl, description: 'This instance (PUBLIC_URL)' }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: '`sk_live_...` or `sk_test_...`' },
            bearer: { type: 'http', scheme: 'bearer', description: 'The API key as a Bearer token' },
            session: { type: 'apiKey', in: 'cookie', name: 'muster_session', description: 'Set by POST /v1/auth/login' },
          },
        },
        security: CREDENTIALS,
      },
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      transformObject: (documents) => finishDocument((documents as { openapiObject: OpenApiDocument }).openapiObject),
    });
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });

    app.get('/v1/openapi.json', { schema: { hide: true }, config: { public: true } }, () => app.swagger());
  },
  { name: 'openapi' },
);

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Makes a retry safe: a repeat with the same key and body answers the first result (24 h).' })),
});

const CREDENTIALS: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }, { session: [] }];

type Json = Record<string, unknown>;
interface Operation extends Json {
  operationId?: string;
  security?: unknown[];
  parameters?: ({ in: string } & Json)[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
}
export interface OpenApiDocument extends Json {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Json>; responses?: Record<string, Json> } & Json;
}

const errorResponse = (description: string, schema = 'Error', extra: Json = {}): Json => ({
  description,
  ...extra,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
});

/** The named error answers and the status each stands for. */
const ERROR_RESPONSES: Record<string, [status: string, response: Json]> = {
  BadRequest: ['400', errorResponse('The body is not JSON (`bad_request`)')],
  Unauthorized: ['401', errorResponse('No valid credential (`unauthorized`)')],
  Forbidden: ['403', errorResponse('Not allowed: role (`forbidden`), plan (`upgrade_required`), a locked resource (`resource_locked`), a test-mode key, or a cross-site cookie request')],
  NotFound: ['404', errorResponse('No such record, or not visible to this credential (`not_found`)')],
  Conflict: ['409', errorResponse('Conflicts with the current state: `slot_unavailable`, a duplicate (`conflict`), or the same Idempotency-Key still in progress')],
  PayloadTooLarge: ['413', errorResponse('The body is over the limit (`payload_too_large`)')],
  UnsupportedMediaType: ['415', errorResponse('The body is not of a type this route takes (`unsupported_media_type`)')],
  ValidationFailed: ['422', errorResponse('The input broke a rule (`validation_failed`): one entry per field', 'ValidationError')],
  RateLimited: [
    '429',
    errorResponse('Too many requests (`rate_limited`)', 'Error', {
      headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
    }),
  ],
  ClientError: ['4XX', errorResponse('Any other client error')],
  ServerError: ['5XX', errorResponse('The server failed (`internal`), or is not ready (`not_ready`); never a stack trace')],
};
const ERROR_BY_STATUS = new Map(Object.entries(ERROR_RESPONSES).map(([name, [status]]) => [status, name]));

/**
 * Operations whose services answer 409 (a duplicate, a taken slot, a state that forbids the
 * change). Routes with an Idempotency-Key get it anyway; a route may also declare it in its schema.
 */
const CONFLICTS = new Set([
  'post /v1/users',
  'post /v1/orgs',
  'patch /v1/orgs/{org_slug}',
  'delete /v1/orgs/{org_slug}',
  'post /v1/orgs/{org_slug}/members',
  'patch /v1/orgs/{org_slug}/members/{user_id}',
  'delete /v1/orgs/{org_slug}/members/{user_id}',
  'post /v1/orgs/{org_slug}/teams',
  'patch /v1/orgs/{org_slug}/teams/{team_slug}',
  'post /v1/orgs/{org_slug}/teams/{team_slug}/members',
  'post /v1/event-types',
  'patch /v1/event-types/{id}',
  'post /v1/orgs/{org_slug}/teams/{team_slug}/event-types',
  'post /v1/bookings',
  'delete /v1/bookings/{id}',
  'post /v1/bookings/{id}/reschedule',
  'post /v1/bookings/manage/{token}/cancel',
  'post /v1/bookings/manage/{token}/reschedule',
]);
const conflicts = (method: string, path: string) => CONFLICTS.has(`${method} ${path}`) || (method === 'post' && /^\/(v1\/)?(book|assign)\//.test(path));

/** Routes no rate limit counts (plugins/rate-limit.ts): health checks and pages outside /v1. */
const unlimited = (method: string, path: string) => path === '/healthz' || path === '/readyz' || (method === 'get' && !path.startsWith('/v1/') && !path.startsWith('/v2/'));

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]*$/;
const looksLikeSchema = (v: Json) => ['type', 'properties', 'anyOf', 'oneOf', 'allOf', 'enum', 'const'].some((k) => k in v);

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/**
 * Moves every titled schema into components.schemas and refers to it. The same title with a
 * different shape is left where it is (test/openapi.test.ts finds such clashes).
 */
function extractComponents(node: unknown, schemas: Record<string, Json>, seen: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => extractComponents(n, schemas, seen));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = extractComponents(v, schemas, seen);
  const name = out.title;
  if (typeof name !== 'string' || !COMPONENT_NAME.test(name) || !looksLikeSchema(out)) return out;
  const key = canonical(out);
  const known = seen.get(name);
  if (known === undefined) {
    seen.set(name, key);
    schemas[name] = out;
  } else if (known !== key) return out;
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * @fastify/swagger moves a response schema's `examples` to its media type (`example`); a named
 * schema keeps them, so its component carries them wherever it is used.
 */
function restoreExamples(response: unknown): void {
  if (!isObject(response) || !isObject(response.content)) return;
  for (const media of Object.values(response.content)) {
    if (!isObject(media) || media.example === undefined || !isObject(media.schema) || typeof media.schema.title !== 'string') continue;
    media.schema.examples ??= [media.example];
    delete media.example;
  }
}

/**
 * A query parameter with a default (`limit`, `page`) may be left out: the validator fills the default in.
 * @fastify/swagger marks every property the query schema lists as required (TypeBox lists one that has a
 * default but is not Optional), which made generated clients demand `limit` on every list call.
 */
function optionalWithDefault(p: Json): void {
  const schema = p.schema;
  if (p.in !== 'query' || !isObject(schema) || schema.default === undefined || p.required !== true) return;
  p.required = false;
  const said = `Default: ${JSON.stringify(schema.default)}.`;
  p.description = typeof p.description === 'string' && p.description !== '' ? `${p.description} ${said}` : said;
}

/** The document's finishing pass (see the top of this file). Pure: works on a copy. */
export function finishDocument(input: OpenApiDocument): OpenApiDocument {
  const doc = structuredClone(input);
  const components = (doc.components ??= {});
  const schemas: Record<string, Json> = {};
  const seen = new Map<string, string>();
  for (const [name, schema] of Object.entries({ Error: ErrorBody, ValidationError: ValidationErrorBody })) {
    schemas[name] = JSON.parse(JSON.stringify(schema)) as Json;
    seen.set(name, canonical(schemas[name]));
  }

  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      op.operationId ??= operationIdOf(method, path);
      const isPublic = Array.isArray(op.security) && op.security.length === 0;
      if (!isPublic) op.security = CREDENTIALS;
      const params = op.parameters ?? [];
      for (const p of params) optionalWithDefault(p);
      const statuses = new Set(['4XX', '5XX']);
      if (!isPublic) statuses.add('401');
      if (!isPublic && method !== 'get') statuses.add('403');
      if (params.some((p) => p.in === 'path')) statuses.add('404');
      if (params.length > 0 || op.requestBody) statuses.add('422');
      if (op.requestBody) ['400', '413', '415'].forEach((s) => statuses.add(s));
      if (!unlimited(method, path)) statuses.add('429');
      if (conflicts(method, path)) statuses.add('409');
      const responses: Record<string, unknown> = {};
      for (const response of Object.values(op.responses ?? {})) restoreExamples(response);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        // Error statuses a route declares itself keep their own description when they have one.
        if (/^[45]/.test(status)) statuses.add(status.toUpperCase());
        else responses[status] = response;
      }
      for (const status of [...statuses].sort()) {
        const name = ERROR_BY_STATUS.get(status);
        responses[status] = name ? { $ref: `#/components/responses/${name}` } : errorResponse('Error');
      }
      op.responses = responses;
    }
  }

  const paths = extractComponents(doc.paths, schemas, seen) as OpenApiDocument['paths'];
  doc.paths = paths;
  // The serialiser's copy of the error body: documented as Error / ValidationError instead.
  const others = { ...(components.schemas ?? {}) };
  delete others.ErrorResponse;
  for (const [k, v] of Object.entries(others)) if (!k.startsWith('def-')) schemas[k] ??= v;
  components.schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  components.responses = Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([name, [, response]]) => [name, response]));
  return JSON.parse(JSON.stringify(doc).replaceAll('"#/components/schemas/ErrorResponse"', '"#/components/schemas/Error"')) as OpenApiDocument;
}
