import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from '../context.js';
import { DAY, iso } from '../lib/clock.js';
import { randomToken, sha256 } from '../lib/crypto.js';
import { AppError, invalidField } from '../lib/errors.js';
import { canonicalJson, type EffectRecorder } from '../lib/idempotency.js';
import { findKey } from './idempotency.repository.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The claim on this request's Idempotency-Key; the handler hands it to the service. Null without a key. */
    idempotency: IdempotencyClaim | null;
  }
  interface FastifyContextConfig {
    /** The route takes an Idempotency-Key; the value is the status its success answers (stored with the response). */
    idempotent?: number;
  }
}

/** A route option that is a hook, a list of them, or absent, as a list. */
function asList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

/** Keys are kept (and replayed) this long; older rows are ignored and purged. */
export const IDEMPOTENCY_TTL_MS = DAY;
const PURGE_EVERY_MS = 10 * 60_000;
const KEY = /^[\x20-\x7e]{1,255}$/;

export interface IdempotencyClaim extends EffectRecorder {
  id: number;
  token: string;
  /** The stored response committed (set after the effect's transaction commits). */
  recorded: boolean;
}

const inFlight = () => new AppError(409, 'conflict', 'A request with this Idempotency-Key is still in progress');
const otherRequest = () =>
  invalidField('Idempotency-Key', 'was already used with another request (method, path or body); use a new key for a new request');

/** What "the same request" means: method, path with query, and the validated body as canonical JSON. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  return sha256(`${method} ${url}\n${canonicalJson(body)}`);
}

/** Who may replay a stored response: the same user in the same mode, or the same client address on public routes. */
function scopeOf(request: FastifyRequest): string {
  return request.actor ? `user:${request.actor.userId}:${request.actor.mode}` : `ip:${request.ip}`;
}

/**
 * Idempotency-Key on the routes whose config says `idempotent` (Stripe's protocol):
 * 1. the request claims (scope, key) with an in-flight row before the handler runs;
 * 2. the service writes the response into that row inside the transaction of its effect;
 * 3. a repeat with the same body gets the stored status and body (`Idempotent-Replayed: true`),
 *    with another method, path or body 422, while the first still runs 409.
 * A 4xx answer is stored too (the request was decided and had no effect); a 5xx frees the key so
 * the client can retry. Keys live 24 hours. An in-flight row older than the lock timeout (a
 * process that died mid-request) may be taken over; the effect's write checks its claim, so a
 * late original rolls back instead of running twice.
 */
export default fp(
  (app: FastifyInstance, { ctx }: { ctx: AppContext }) => {
    app.decorateRequest('idempotency', null);
    let lastPurge = 0;

    async function purge(now: Date): Promise<void> {
      if (now.getTime() - lastPurge < PURGE_EVERY_MS) return;
      lastPurge = now.getTime();
      await ctx.db.deleteFrom('idempotency_keys').where('created_at', '<', iso(new Date(now.getTime() - IDEMPOTENCY_TTL_MS))).execute();
    }

    function claimOf(id: number, token: string, status: number): IdempotencyClaim {
      const claim: IdempotencyClaim = {
        id,
        token,
        recorded: false,
        record: async (tx, result) => {
          const res = await tx.db
            .updateTable('idempotency_keys')
            .set({ state: 'done', status_code: status, response_body: JSON.stringify(result ?? null), lock_token: null })
            .where('id', '=', id)
            .where('lock_token', '=', token)
            .where('state', '=', 'pending')
            .executeTakeFirst();
          // Taken over after the lock timeout: this late run must not take effect.
          if (Number(res.numUpdatedRows) !== 1) throw inFlight();
          tx.onCommit(() => {
            claim.recorded = true;
          });
        },
      };
      return claim;
    }

    function replay(reply: FastifyReply, status: number, body: unknown): FastifyReply {
      return reply.status(status).header('idempotent-replayed', 'true').send(body);
    }

    // On the idempotent routes only (route-level hooks added as each route is declared): every other
    // request skips both hooks instead of running them to find nothing to do. Synchronous for a
    // request without a key: no promise.
    const claimHook = (status: number) => (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      const given = request.headers['idempotency-key'];
      if (given === undefined) return done();
      claim(request, reply, status, given).then(
        () => done(),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    };
    app.addHook('onRoute', (route) => {
      const status = route.config?.idempotent;
      if (status === undefined) return;
      route.preHandler = [claimHook(status), ...asList(route.preHandler)];
      route.onSend = [settleHook, ...asList(route.onSend)];
    });

    async function claim(request: FastifyRequest, reply: FastifyReply, status: number, given: string | string[]): Promise<unknown> {
      if (typeof given !== 'string' || !KEY.test(given)) {
        throw invalidField('Idempotency-Key', 'must be 1 to 255 printable ASCII characters');
      }
      const now = ctx.clock.now();
      await purge(now);
      const scope = scopeOf(request);
      const fingerprint = requestFingerprint(request.method, request.url, request.body);
      const expired = iso(new Date(now.getTime() - IDEMPOTENCY_TTL_MS));
      const stale = iso(new Date(now.getTime() - ctx.config.idempotencyLockTimeoutMs));

      // A few rounds at most: each one either decides or removes what stood in the way.
      for (let round = 0; round < 5; round++) {
        const token = randomToken(16);
        const inserted = await ctx.db
          .insertInto('idempotency_keys')
          .values({ scope, key: given, fingerprint, state: 'pending', lock_token: token, locked_at: iso(now), status_code: null, response_body: null, created_at: iso(now) })
          .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
          .returning('id')
          .executeTakeFirst();
        if (inserted) {
          request.idempotency = claimOf(inserted.id, token, status);
          return;
        }

        const row = await findKey(ctx.db, scope, given);
        if (!row) continue;
        if (row.created_at < expired) {
          await ctx.db.deleteFrom('idempotency_keys').where('id', '=', row.id).where('created_at', '=', row.created_at).execute();
          continue;
        }
        if (row.fingerprint !== fingerprint) throw otherRequest();
        if (row.state === 'done') return replay(reply, row.status_code ?? 200, row.response);
        if (row.locked_at >= stale) {
          reply.header('retry-after', '1');
          throw inFlight();
        }
        // Abandoned by a process that stopped mid-request: take it over.
        const taken = await ctx.db
          .updateTable('idempotency_keys')
          .set({ lock_token: token, locked_at: iso(now) })
          .where('id', '=', row.id)
          .where('state', '=', 'pending')
          .where('locked_at', '=', row.locked_at)
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) === 1) {
          request.idempotency = claimOf(row.id, token, status);
          return;
        }
      }
      throw inFlight();
    }

    // Answers that did not record themselves in the effect's transaction: a 4xx (decided, no
    // effect) is stored, a 5xx frees the key for a retry.
    function settleHook(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void {
      const claim = request.idempotency;
      if (!claim || claim.recorded) return done(null, payload);
      settle(request, reply, payload, claim).then(
        () => done(null, payload),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    }

    async function settle(request: FastifyRequest, reply: FastifyReply, payload: unknown, claim: IdempotencyClaim): Promise<void> {
      claim.recorded = true;
      const mine = ctx.db.updateTable('idempotency_keys').where('id', '=', claim.id).where('lock_token', '=', claim.token).where('state', '=', 'pending');
      const status = reply.statusCode;
      if (status >= 500 || typeof payload !== 'string') {
        await ctx.db.deleteFrom('idempotency_keys').where('id', '=', claim.id).where('lock_token', '=', claim.token).where('state', '=', 'pending').execute();
        return;
      }
      if (status < 400) request.log.warn({ route: request.routeOptions.url }, 'idempotent route answered without recording in its transaction');
      await mine.set({ state: 'done', status_code: status, response_body: payload, lock_token: null }).execute();
    }
  },
  { name: 'idempotency', dependencies: ['auth'] },
);
