import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { TOKEN_PATTERN } from '../devices/index.js';
import type { CachedDevice } from '../devices/index.js';
import type { Params } from './fix.js';
import { gpsloggerFix } from './gpslogger.js';
import { authenticate, ingest, knownDevice } from './ingest.js';
import { isOsmAndRequest, osmandFix, osmandToken } from './osmand.js';
import { owntracksPost } from './owntracks.service.js';
import { isTraccarJson, traccarJson } from './traccar-json.js';

const tags = ['Trackers'];
// Public in the auth plugin's sense: the device token authenticates (never a key or a cookie), and
// each request is counted against its device once the token is known (rateLimitHit).
const config = { public: true, ownRateLimit: true };
const AnyQuery = Type.Object({}, { additionalProperties: true });
const Empty = { description: 'Empty body: the fix was taken' };

/** `a=1&a=2` -> {a: ['1', '2']}, like the query string parser. */
function parseForm(body: string): Params {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** Whether the request's body came as JSON (`application/json`, any parameters), not as a form. */
function isJson(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && /^application\/json\s*(;|$)/i.test(type.trim());
}

/** Query and form (or flat JSON) parameters together; the query wins, as in Traccar's decoder. */
function paramsOf(request: FastifyRequest): Params {
  const query = request.query as Params;
  const body = request.body;
  // A GET has no body: the query as it is (only read, never changed), without a copy.
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) return query;
  return { ...(body as Params), ...query };
}

/** The credential of an OwnTracks post: basic auth (the password, else the user name), else `?token=`. */
function owntracksToken(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (auth?.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    const [user, pass] = i === -1 ? [decoded, ''] : [decoded.slice(0, i), decoded.slice(i + 1)];
    return TOKEN_PATTERN.test(pass) ? pass : user;
  }
  const q = (request.query as Params).token;
  return typeof q === 'string' ? q : undefined;
}

/**
 * Authenticates the token and counts the request: per device once known; a refused token counts
 * against the caller's address with the public routes' limit, so guessing tokens is throttled.
 * Without a promise for the common request (a token the device cache knows, counted in this
 * process; a 429 is thrown at once); callers `await` the answer either way.
 */
function asDevice(app: FastifyInstance, ctx: AppContext, request: FastifyRequest, reply: FastifyReply, token: string | undefined): CachedDevice | Promise<CachedDevice> {
  const known = knownDevice(ctx, token);
  if (!known) return authenticated(app, ctx, request, reply, token);
  const counting = app.rateLimitHit(reply, 'device', `device:${known.device.id}`);
  return counting ? counting.then(() => known) : known;
}

/** asDevice's path for a token the cache does not know yet: read it, then count. */
async function authenticated(app: FastifyInstance, ctx: AppContext, request: FastifyRequest, reply: FastifyReply, token: string | undefined): Promise<CachedDevice> {
  try {
    const entry = await authenticate(ctx, token);
    await app.rateLimitHit(reply, 'device', `device:${entry.device.id}`);
    return entry;
  } catch (err) {
    if (err instanceof AppError && err.status === 401) await app.rateLimitHit(reply, 'public', `public:ip:${request.ip}`);
    throw err;
  }
}

export const trackersRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // Tracker apps post HTML-form bodies; only these routes accept one.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, parseForm(body as string)));
  // OwnTracks posts a zero-length JSON body when a friend is deleted (its HTTP booklet): no body, not 400.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') done(null, undefined);
    else void json(req, body as string, done);
  });

  /**
   * OsmAnd parameters, or the Traccar Client JSON body: one fix or a buffered batch. The content
   * type tells them apart: a form field `location` is OsmAnd's own `lat,lon`, only a JSON body's
   * `location` is Traccar Client's object.
   */
  const osmand = async (request: FastifyRequest, reply: FastifyReply) => {
    if (isJson(request) && isTraccarJson(request.body)) {
      const { token, fixes } = traccarJson(request.body);
      await ingest(ctx, await asDevice(app, ctx, request, reply, token), 'traccar', fixes());
    } else {
      const params = paramsOf(request);
      // Authenticated (401) and counted (429) before the fix is read (400); no microtask when the token is known.
      const pending = asDevice(app, ctx, request, reply, osmandToken(params, TOKEN_PATTERN));
      const device = pending instanceof Promise ? await pending : pending;
      await ingest(ctx, device, 'osmand', [osmandFix(params)]);
    }
    return reply.status(200).send();
  };

  const osmandSchema = { tags, querystring: AnyQuery, response: { 200: Empty } };
  for (const url of ['/v1/trackers/osmand', '/v1/trackers/traccar']) {
    app.get(url, { config, schema: { ...osmandSchema, summary: 'OsmAnd protocol fix (Traccar Client, OsmAnd, hardware trackers)' } }, osmand);
    app.post(url, { config, schema: { ...osmandSchema, summary: 'OsmAnd fix as query or form; or the Traccar Client JSON (one or a batch)' } }, osmand);
  }
  // Traccar Client's default server URL is the root. A plain visit still goes to the dashboard.
  app.get('/', { config, schema: { hide: true, querystring: AnyQuery } }, (request, reply) =>
    isOsmAndRequest(paramsOf(request)) ? osmand(request, reply) : reply.redirect('/app/'),
  );
  app.post('/', { config, schema: { hide: true, querystring: AnyQuery } }, osmand);

  app.post(
    '/v1/trackers/owntracks',
    { config, schema: { tags, summary: 'OwnTracks HTTP mode: a location; answered with the team', querystring: AnyQuery, response: { 200: Type.Array(Type.Object({}, { additionalProperties: true })) } } },
    async (request, reply) => owntracksPost(ctx, await asDevice(app, ctx, request, reply, owntracksToken(request)), request.body),
  );

  const gpslogger = async (request: FastifyRequest, reply: FastifyReply) => {
    const params = paramsOf(request);
    const token = typeof params.token === 'string' ? params.token : undefined;
    await ingest(ctx, await asDevice(app, ctx, request, reply, token), 'gpslogger', [gpsloggerFix(params)]);
    return reply.status(200).send();
  };
  const gpsSchema = { tags, summary: "GPSLogger's custom URL (GET or POST, its placeholders as parameters)", querystring: AnyQuery, response: { 200: Empty } };
  app.get('/v1/trackers/gpslogger', { config, schema: gpsSchema }, gpslogger);
  app.post('/v1/trackers/gpslogger', { config, schema: gpsSchema }, gpslogger);
};
