import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Config } from './config.js';
import { openDatabase, type Database, type OnQuery } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { instanceSecret } from './db/settings.js';
import { createLocalBus, type EventBus, type LiveEvent } from './events/bus.js';
import { createRedisBus } from './events/redis-bus.js';
import { Hub } from './events/hub.js';
import { safeRequest } from './lib/log-safe.js';
import type { AccessNotice } from './events/access.js';
import type { Channel } from './events/channels.js';
import { memoryStreamSlots, redisStreamSlots, type StreamSlots } from './events/stream-slots.js';
import { transactionRunner, type Tx } from './db/transaction.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLocalStorage, type ObjectStorage } from './lib/storage.js';
import { createPasswordHasher, type PasswordHasher } from './lib/passwords.js';
import { connectRedis } from './lib/redis.js';
import type { Redis } from 'ioredis';
import { createMemoryBeaconStore, createRedisBeaconStore, positionPort, type BeaconStore, type PositionPort } from './modules/signals/index.js';
import type { EventCatalog } from './modules/streams/index.js';
import { DeviceCache } from './modules/devices/index.js';
import { createTrackRecorder, type TrackRecorder } from './modules/tracks/index.js';
import { ListCache } from './modules/incidents/index.js';
import { AroundMemo } from './modules/oncall/index.js';
import { ReportStore } from './modules/reports/index.js';
import { escalationPort, type EscalationPort } from './modules/paging/index.js';
import { arrivalWatch, type ArrivalWatch } from './modules/dispatch/index.js';
import { subscriptionsPort, type SubscriptionsPort } from './modules/subscriptions/index.js';
import { siteWatch, type SiteWatch } from './modules/sites/index.js';
import { createFailureStore, type FailureStore } from './lib/account-throttle.js';

/** Everything a service needs, built once: the one composition root. */
export interface AppContext {
  config: Config;
  database: Database;
  db: Database['db'];
  clock: Clock;
  log: FastifyBaseLogger;
  passwords: PasswordHasher;
  events: Events;
  /** Signs public links (booking management, confirm and decline); kept in the database. */
  secret: string;
  /** Where uploads live: local disk under DATA_DIR/uploads (an S3-compatible store can implement the same interface). */
  storage: ObjectStorage;
  outbox: OutboxSignal;
  /** Which devices are beaconing, and where (modules/signals): in Redis when REDIS_URL is set, else in memory (its active rows loaded on first use, not at start). */
  beacons: BeaconStore;
  /** Pages of the incident list by version (modules/incidents, list-cache.ts). */
  listCache: ListCache;
  /** Who is on call now and next per schedule (modules/oncall, around-memo.ts); none with ONCALL_MEMO_SIZE=0. */
  oncallMemo: AroundMemo | undefined;
  /** The report computations this instance runs (modules/reports, stored-results.ts). */
  reportStore: ReportStore;
  /** Tracker devices by token, dropped on access notices (modules/devices). */
  deviceCache: DeviceCache;
  /** Failed sign-in tries per account and door (lib/account-throttle.ts): in Redis when there is one. */
  accountThrottle: FailureStore;
  /** Escalation policies and pages (modules/paging) as the modules below it use them. */
  escalation: EscalationPort;
  /** Incident subscriptions (modules/subscriptions) as incidents use them: the hook of every timeline event, and the per-org cache behind it. */
  subscriptions: SubscriptionsPort;
  /** The modules that watch accepted positions (arrival, sites, tracks), called by the beacon path (modules/signals positions.ts). */
  positions: PositionPort;
  /** Arrival and departure from the assignee's position (modules/dispatch arrival.ts): its cache and queue. */
  arrival: ArrivalWatch;
  /** Tracks of the orgs that keep them (modules/tracks): the position observer's batch; `flush()` writes it. */
  tracks: TrackRecorder;
  /** Sites entered and left (modules/sites presence.ts): the per-device state and the writes of transitions. */
  sites: SiteWatch;
  /** The instance's Redis connection when REDIS_URL is set (shared state between instances), else null. */
  redis: Redis | null;
  /** Runs `fn` in one transaction; `tx.onCommit` hooks run after it commits. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs `fn` when the context closes, before the database closes (flushes state kept in memory). */
  onClose(fn: () => Promise<void>): void;
  close(): Promise<void>;
}

/** An event of the catalog as a publisher hands it over. */
export type CatalogEvent<C extends Channel, T extends keyof EventCatalog[C] & string> = Omit<LiveEvent, 'id' | 'channel' | 'type' | 'payload'> & {
  channel: C;
  type: T;
  payload: EventCatalog[C][T];
};

export interface Events {
  bus: EventBus;
  hub: Hub;
  /**
   * Publishes a live event once the transaction commits (never for a rolled-back change). Its
   * channel, type and payload are one of the event catalog's (modules/streams/catalog.ts).
   */
  publish<C extends Channel, T extends keyof EventCatalog[C] & string>(tx: Tx, event: CatalogEvent<C, T>): void;
  /**
   * Tells every instance that some access ended (events/access.ts): the streams it covers close.
   * Call it where the key, session or membership ends; with `tx`, once that commits.
   */
  endAccess(notice: AccessNotice, tx?: Tx): void;
  /** The per-user cap on concurrent streams (STREAM_LIMIT_PER_USER). */
  streamSlots: StreamSlots;
}

/** Wakes the delivery worker after a commit that queued something (a no-op when none runs). */
export interface OutboxSignal {
  wake(): void;
  onWake(fn: () => void): () => void;
}

function createOutboxSignal(): OutboxSignal {
  const listeners = new Set<() => void>();
  return {
    wake: () => listeners.forEach((fn) => fn()),
    onWake: (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}

export interface ContextOverrides {
  clock?: Clock;
  log?: FastifyBaseLogger;
  database?: Database;
  /** Sees the SQL of every query, its parameters and duration in ms (tests that count queries, bench/write-limit.bench.ts). */
  onQuery?: OnQuery;
  /** The password hasher (test/helpers.ts gives one of a lower cost; the service always has OWASP's). */
  passwords?: PasswordHasher;
}

/** The instance's logger; `destination` lets tests read what it writes (default stdout). */
export function createLogger(config: Config, destination?: pino.DestinationStream): FastifyBaseLogger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    // Requests are logged by method, route and query names only (src/lib/log-safe.ts); the header
    // paths stay redacted for any code that logs headers itself.
    serializers: { req: safeRequest },
    redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Opens the database, migrates it, and wires the services' dependencies. */
export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const log = overrides.log ?? createLogger(config);
  const database =
    overrides.database ??
    openDatabase({
      databaseUrl: config.databaseUrl,
      databaseSchema: config.databaseSchema,
      sqliteFile: path.join(config.dataDir, 'muster.db'),
      ...(overrides.onQuery ? { onQuery: overrides.onQuery } : {}),
    });
  await migrateToLatest(database);
  const secret = await instanceSecret(database.db);

  const clock = overrides.clock ?? systemClock;
  const redis = config.redisUrl ? connectRedis(config.redisUrl, log) : null;
  const replayMax = 50_000;
  const bus = redis ? createRedisBus(redis, log, { prefix: config.redisPrefix, replayMs: config.sseReplayMs, replayMax }) : createLocalBus();
  const hub = new Hub(bus, {
    heartbeatMs: config.sseHeartbeatMs,
    replayMs: config.sseReplayMs,
    replayMax,
    maxBufferedBytes: config.sseMaxBufferBytes,
    // Local ids are epoch milliseconds * 1000: anything below now was given out before this process.
    ...(redis ? {} : { resumeFloor: Date.now() * 1000 }),
    credentialClock: () => clock.nowMs(),
    recheckMs: config.streamRecheckMs,
    onCheckError: (err) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'checking open streams’ access failed; the next check tries again'),
  });
  const limit = config.streamLimitPerUser;
  const streamSlots = redis ? redisStreamSlots(redis, log, { prefix: config.redisPrefix, limit }) : memoryStreamSlots(limit);
  const transactions = transactionRunner(database, (err) => log.error({ err }, 'after-commit hook failed'), {
    onGroup: (size) => log.debug({ group: size }, 'grouped commit'),
  });
  const beacons = redis
    ? createRedisBeaconStore(redis, config.redisPrefix, log, (fn) => transactions.run(fn))
    : createMemoryBeaconStore({ db: database.db, transaction: (fn) => transactions.run(fn), log, flushMs: config.beaconFlushMs });
  const events: Events = {
    bus,
    hub,
    publish: (tx, event) => tx.onCommit(() => bus.publish(event)),
    endAccess: (notice, tx) => (tx ? tx.onCommit(() => bus.publishAccess(notice)) : bus.publishAccess(notice)),
    streamSlots,
  };

  const closers: (() => Promise<void>)[] = [];
  // Tracks (issue #38): a position observer with its own batch, flushed before the beacons close.
  const tracks = createTrackRecorder({ db: database.db, transaction: (fn) => transactions.run(fn), bus, log, flushMs: config.beaconFlushMs, moveMs: config.trackMoveMs });
  closers.push(() => tracks.close());
  const escalation = escalationPort();
  const arrival = arrivalWatch(bus);
  const sites = siteWatch();
  return {
    config,
    database,
    db: database.db,
    clock,
    log,
    passwords: overrides.passwords ?? createPasswordHasher(),
    events,
    secret,
    storage: createLocalStorage(path.join(config.dataDir, 'uploads')),
    outbox: createOutboxSignal(),
    beacons,
    listCache: new ListCache(),
    oncallMemo: config.oncallMemoSize === 0 ? undefined : new AroundMemo(config.oncallMemoSize),
    reportStore: new ReportStore(config.reports),
    deviceCache: new DeviceCache(database.db, bus),
    accountThrottle: createFailureStore(redis, config.redisPrefix, log),
    escalation,
    subscriptions: subscriptionsPort(bus),
    positions: positionPort([(c, fix) => arrival.observe(c, fix), (c, fix) => sites.observe(c, fix), (_ctx, fix) => tracks.observe(fix)]),
    arrival,
    tracks,
    sites,
    redis,
    transaction: (fn) => transactions.run(fn),
    onClose: (fn) => closers.push(fn),
    close: async () => {
      // Closers first (the beacon flush writes through a transaction), then the last group commits.
      for (const fn of closers.splice(0)) await fn().catch((err: unknown) => log.error({ err }, 'closing failed'));
      // A paging run woken by a commit finishes before the database goes.
      await escalation.idle();
      await arrival.idle();
      arrival.close();
      await sites.idle();
      sites.close();
      await beacons.close().catch((err: unknown) => log.error({ err }, 'closing the beacon store failed'));
      await transactions.drain();
      hub.close();
      await streamSlots.close();
      await bus.close();
      redis?.disconnect();
      await database.destroy();
    },
  };
}
