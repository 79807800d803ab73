import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { Channel } from '../../events/channels.js';
import { openStream } from '../../events/sse.js';
import { AppError, unauthorized } from '../../lib/errors.js';
import { resolveCredential } from '../auth/index.js';
import { streamAudience } from '../orgs/index.js';

/** A client over its stream cap waits this long before trying again (streams free up when they close). */
export const STREAM_RETRY_AFTER_S = 5;

/**
 * Opens a live stream of `channel` for the request's credential, counted against the user's cap,
 * and tied to that credential: a notice that ends it (events/access.ts) closes the stream.
 *
 * The auth hook checked the credential before this runs, so a revocation committed in between
 * would be missed; hence the credential and the audience are read again here, after the hub
 * starts collecting notices, and a notice that covers them before the stream is subscribed
 * means reading again (the reads may predate the change).
 */
export async function openLiveStream(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, channel: Channel): Promise<void> {
  const { hub, streamSlots } = ctx.events;
  for (let attempt = 0; attempt < 3; attempt++) {
    const watch = hub.watchAccess();
    let release: (() => void) | undefined;
    try {
      const credential = await resolveCredential(ctx, request);
      if (!credential) throw unauthorized();
      const audience = await streamAudience(ctx, credential, channel);
      release = await streamSlots.acquire(credential.userId);
      if (!release) {
        reply.header('retry-after', String(STREAM_RETRY_AFTER_S));
        throw new AppError(429, 'rate_limited', 'Too many requests');
      }
      const access = { userId: credential.userId, keyId: credential.keyId, sessionId: credential.sessionId, expiresAt: credential.expiresAt };
      if (watch.covers(access, audience.orgIds)) continue; // access changed while reading: read again
      openStream(request, reply, hub, audience, access, release);
      release = undefined; // the stream gives it back when it closes
      return;
    } finally {
      watch.stop();
      release?.();
    }
  }
  reply.header('retry-after', '1');
  throw new AppError(503, 'not_ready', 'Access is changing; try again');
}
