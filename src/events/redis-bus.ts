import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import type { Mode } from '../db/schema.js';
import { randomUUID } from 'node:crypto';
import { subscriberOf } from '../lib/redis.js';
import { parseNotice } from './access.js';
import { createIdSource, type AccessListener, type EventBus, type Listener, type LiveEvent } from './bus.js';

export interface RedisBusOptions {
  /** Key prefix (REDIS_PREFIX). */
  prefix: string;
  /** Events younger than this stay in the shared replay stream. */
  replayMs: number;
  /** At most about this many entries per channel's stream (trimmed with `~`, so Redis may keep a few more). */
  replayMax: number;
  now?: () => number;
}

/**
 * One atomic step per event: an id from Redis' clock in microseconds (the shape of local ids:
 * milliseconds * 1000 + a counter), never below the last one given out by any instance; the event
 * appended to the stream of its channel, mode and org (capped by count and age, for Last-Event-ID
 * replay); and one PUBLISH to every instance. Being one script, publish order equals id order everywhere.
 * Numbers go through string.format('%.0f'): Lua's tostring would print 1.7e+15.
 */
const PUBLISH_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local id = now
if id <= last then id = last + 1 end
local sid = string.format('%.0f', id)
redis.call('SET', KEYS[2], sid)
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[7], sid .. '-0', 't', ARGV[4], 'd', ARGV[5])
redis.call('XTRIM', KEYS[1], 'MINID', '~', string.format('%.0f', now - tonumber(ARGV[6]) * 1000))
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PUBLISH', KEYS[3], sid .. '\\n' .. ARGV[1] .. '\\n' .. ARGV[2] .. '\\n' .. ARGV[3] .. '\\n' .. ARGV[4] .. '\\n' .. ARGV[5])
return sid
`;

type PublishCommand = (stream: string, lastId: string, topic: string, ...args: string[]) => Promise<string>;

/** The wire form: id, channel, org, mode and type on lines of their own, then the data JSON (which holds no raw newline). */
function parseWire(message: string): LiveEvent | undefined {
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < 5; i++) {
    const end = message.indexOf('\n', from);
    if (end === -1) return undefined;
    parts.push(message.slice(from, end));
    from = end + 1;
  }
  const [id, channel, orgId, mode, type] = parts as [string, string, string, string, string];
  return { id: Number(id), channel, orgId: Number(orgId), mode: mode as Mode, type, payload: undefined, data: message.slice(from) };
}

/**
 * The event bus across instances. Publishing serialises the event once and runs the script above;
 * every instance (this one included) hears it on its subscriber connection and hands it to its hub
 * with the serialised data, so no instance serialises it again. While Redis is unreachable an event
 * is delivered to this instance's streams only, with a local id, and delivery across instances
 * resumes by itself once Redis is back (the connections reconnect, and the subscriber subscribes
 * again on each new connection).
 */
export function createRedisBus(redis: Redis, log: FastifyBaseLogger, options: RedisBusOptions): EventBus {
  const listeners = new Set<Listener>();
  const accessListeners = new Set<AccessListener>();
  /** Tags this instance's access notices: it acts on its own at once and skips their echo. */
  const instanceId = randomUUID();
  const keys = {
    /** One stream per channel, mode and org: a replay reads exactly the events its client may see. */
    stream: (channel: string, mode: Mode, orgId: number) => `${options.prefix}events:${channel}:${mode}:${orgId}`,
    lastId: `${options.prefix}events:last-id`,
    topic: `${options.prefix}events`,
    accessTopic: `${options.prefix}access`,
  };
  const localId = createIdSource(options.now);
  const now = options.now ?? Date.now;
  const dispatch = (event: LiveEvent) => {
    for (const listener of listeners) listener(event);
  };

  redis.defineCommand('musterPublish', { numberOfKeys: 3, lua: PUBLISH_SCRIPT });
  const publishCommand = (redis as unknown as { musterPublish: PublishCommand }).musterPublish.bind(redis);

  const sub = subscriberOf(redis, log);
  sub.on('message', (topic: string, message: string) => {
    if (topic === keys.accessTopic) {
      const newline = message.indexOf('\n');
      const notice = newline === -1 || message.slice(0, newline) === instanceId ? undefined : parseNotice(message.slice(newline + 1));
      if (notice) for (const listener of accessListeners) listener(notice);
      return;
    }
    if (topic !== keys.topic) return;
    const event = parseWire(message);
    if (event) dispatch(event);
  });
  /** accessEpoch(): counts the subscriptions that took; undefined while the subscriber is not subscribed. */
  let epoch = 0;
  let hearing = false;
  const resumed = new Set<() => void>();
  const subscribe = () => {
    sub
      .subscribe(keys.topic, keys.accessTopic)
      .then(() => {
        epoch += 1;
        hearing = true;
        for (const listener of resumed) listener();
      })
      .catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'redis subscribe failed; retried on the next connection'));
  };
  sub.on('ready', subscribe);
  sub.on('close', () => (hearing = false));

  return {
    publish: (event) => {
      const data = event.data ?? JSON.stringify({ type: event.type, payload: event.payload });
      const args = [event.channel, String(event.orgId), event.mode, event.type, data, String(options.replayMs), String(options.replayMax)];
      publishCommand(keys.stream(event.channel, event.mode, event.orgId), keys.lastId, keys.topic, ...args).catch((err: unknown) => {
        log.warn({ err: err instanceof Error ? err.message : String(err), type: event.type }, 'redis publish failed: event delivered on this instance only');
        dispatch({ ...event, id: localId(), data });
      });
    },
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    publishAccess: (notice) => {
      // This instance first and without waiting on Redis; the others through one PUBLISH.
      for (const listener of accessListeners) listener(notice);
      redis.publish(keys.accessTopic, `${instanceId}\n${JSON.stringify(notice)}`).catch((err: unknown) => {
        log.error({ err: err instanceof Error ? err.message : String(err), notice }, 'redis publish of an access notice failed: streams it covers on other instances stay open until their next check of access (STREAM_RECHECK_MS, or when their subscriber resubscribes)');
      });
    },
    subscribeAccess: (listener) => {
      accessListeners.add(listener);
      return () => accessListeners.delete(listener);
    },
    accessEpoch: () => (hearing && sub.status === 'ready' ? epoch : undefined),
    onHearingResumed: (listener) => {
      resumed.add(listener);
      return () => resumed.delete(listener);
    },
    replay: async ({ channel, orgIds, mode }, afterId) => {
      const oldest = (now() - options.replayMs) * 1000;
      // Ids are microseconds of Redis' clock: an id from before the window may have missed events.
      let complete = afterId + 1 >= oldest;
      const start = `${Math.max(afterId + 1, oldest).toFixed(0)}-0`;
      const orgs = [...orgIds];
      try {
        // Per org: the events after the id, and the stream's length and oldest entry (a stream at
        // its count cap whose oldest entry is newer than the id was trimmed past it).
        const read = redis.pipeline(
          orgs.flatMap((org) => {
            const key = keys.stream(channel, mode, org);
            return [['xrange', key, start, '+', 'COUNT', String(options.replayMax)], ['xlen', key], ['xrange', key, '-', '+', 'COUNT', '1']];
          }),
        );
        const results = (await read.exec()) ?? [];
        const events: LiveEvent[] = [];
        for (let i = 0; i < orgs.length; i++) {
          const [[e1, entries], [e2, length], [e3, first]] = results.slice(i * 3, i * 3 + 3) as [[Error | null, [string, string[]][]], [Error | null, number], [Error | null, [string, string[]][]]];
          const failed = e1 ?? e2 ?? e3;
          if (failed) throw failed;
          const firstId = first[0] ? Number(first[0][0].slice(0, first[0][0].indexOf('-'))) : undefined;
          if (length >= options.replayMax && firstId !== undefined && firstId > afterId + 1) complete = false;
          if (entries.length >= options.replayMax) complete = false; // more than one replay may carry
          for (const [sid, fields] of entries) {
            const f: Record<string, string> = {};
            for (let j = 0; j + 1 < fields.length; j += 2) f[fields[j]!] = fields[j + 1]!;
            events.push({ id: Number(sid.slice(0, sid.indexOf('-'))), channel, orgId: orgs[i]!, mode, type: f.t ?? '', payload: undefined, data: f.d ?? '' });
          }
        }
        return { events: events.sort((x, y) => x.id - y.id), complete };
      } catch (err) {
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'redis replay failed: replaying from this instance only');
        return undefined;
      }
    },
    close: () => {
      listeners.clear();
      accessListeners.clear();
      resumed.clear();
      sub.disconnect();
      return Promise.resolve();
    },
  };
}
