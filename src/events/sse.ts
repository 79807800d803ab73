import type { FastifyReply, FastifyRequest } from 'fastify';
import { frame, type Audience, type Hub, type StreamAccess } from './hub.js';

/**
 * How long a client waits before reconnecting (the SSE `retry:` field, sent once at connect):
 * long enough that a fleet reconnecting after a restart or a revocation does not stampede.
 */
export const RETRY_MS = 3_000;

/** Last-Event-ID from the header (browsers' EventSource) or the `last_event_id` query (manual reconnects). */
export function lastEventIdOf(request: FastifyRequest): number | undefined {
  const raw = request.headers['last-event-id'] ?? (request.query as { last_event_id?: string } | undefined)?.last_event_id;
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^\d{1,16}$/.test(String(value))) return undefined;
  return Number(value);
}

/**
 * Turns the reply into a Server-Sent Events stream on the hub. Once the headers are out nothing
 * may answer an error status, so every check happens before this is called. `onClose` runs once
 * the connection is gone, whoever closed it.
 */
export function openStream(request: FastifyRequest, reply: FastifyReply, hub: Hub, audience: Audience, access?: StreamAccess, onClose?: () => void): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
    'x-request-id': request.id,
  });
  res.write(`retry: ${RETRY_MS}\n${frame(undefined, { type: 'connected', org_ids: [...audience.orgIds].sort((a, b) => a - b) })}`);
  const unsubscribe = hub.subscribe(audience, res, lastEventIdOf(request), access);
  res.on('close', () => {
    unsubscribe();
    onClose?.();
  });
}
