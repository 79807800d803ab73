import path from 'node:path';
import { isIP } from 'node:net';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  /** TCP port to listen on. */
  port: number;
  /** Interface to bind. */
  host: string;
  /** The address users reach Muster at; every link Muster writes starts with it. No trailing slash. */
  publicUrl: string;
  /** Directory for the SQLite file and uploads. */
  dataDir: string;
  /** PostgreSQL connection string; undefined selects the embedded SQLite database. */
  databaseUrl: string | undefined;
  /** PostgreSQL schema to use (search_path); lets several instances or test runs share one database. */
  databaseSchema: string | undefined;
  /** Redis connection string; set it to share live events, beacon state and rate-limit counters between instances. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key Muster writes (several deployments or test runs can share one Redis). */
  redisPrefix: string;
  /** Emails that are instance admins in addition to the first registered user. Lower-cased. */
  adminEmails: readonly string[];
  logLevel: LogLevel;
  /** Trust X-Forwarded-* headers from a reverse proxy. */
  trustProxy: boolean;
  /** Largest accepted JSON body, in bytes. */
  bodyLimit: number;
  /** Session cookie lifetime in milliseconds (14 days). */
  sessionTtlMs: number;
  /** Whether cookies carry the Secure attribute (PUBLIC_URL is https). */
  secureCookies: boolean;
  /** Live streams: heartbeat interval, replay window for Last-Event-ID, and the unflushed bytes after which a client that stopped reading is dropped. */
  sseHeartbeatMs: number;
  sseReplayMs: number;
  sseMaxBufferBytes: number;
  /** How often the SLA sweeper looks for incidents entering warning or breach. */
  slaSweepIntervalMs: number;
  /** How often paging's notification sweep sends the notifications that fell due (a person's rules' delays). */
  pagingSweepIntervalMs: number;
  /** A beaconing device silent this long is switched off, as if it had stopped; checked every beaconSweepIntervalMs. */
  beaconTimeoutMs: number;
  beaconSweepIntervalMs: number;
  /** Without Redis: how often the positions of moving devices are written to the database (a crash loses at most this much). */
  beaconFlushMs: number;
  /** How often staged track positions move to the track (modules/tracks, docs/trackers.md). */
  trackMoveMs: number;
  /** Deliveries: SMTP server (unset: emails are logged and kept as not sent), sender address. */
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Webhooks may target private, loopback and link-local addresses (tests, closed networks). */
  allowPrivateWebhooks: boolean;
  webhookTimeoutMs: number;
  /** The VAPID subject: a mailto: or https: address push services may contact. */
  vapidSubject: string;
  /** Twilio (all three set) sends phone alerts; else a generic HTTP hook; else they are skipped. */
  twilio: { accountSid: string; authToken: string; from: string; apiUrl: string } | undefined;
  phoneWebhookUrl: string | undefined;
  phoneDailyCap: number;
  /** How often the delivery worker looks for due deliveries (it is also woken by each new one). */
  outboxPollMs: number;
  /**
   * Requests allowed per window and bucket (0 = unlimited): `api` per user and mode, the others per
   * client IP: `auth` (login, codes, registration), `booking` (public booking posts), `public` (other public API routes);
   * `device` per tracker device token (modules/trackers counts it itself).
   */
  rateLimit: { windowMs: number; api: number; auth: number; booking: number; public: number; device: number; account: number; accountWindowMs: number };
  /** An Idempotency-Key request still marked in flight after this long is taken as abandoned (a crash) and may run again. */
  idempotencyLockTimeoutMs: number;
  /** Origins allowed to frame the public booking pages (CSP frame-ancestors); `*` allows any. */
  embedAllowedOrigins: readonly string[];
  /** Slow-client guards: the whole request within requestTimeoutMs, its headers within headersTimeoutMs. */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  /** The dashboard map's tile URL template ({z}/{x}/{y}; '' for no tiles) and its attribution (HTML). */
  mapTileUrl: string;
  mapTileAttribution: string;
  /** Hosts' external calendars: how often they are read, and each exchange's deadline and largest answer. */
  calendarSyncIntervalMs: number;
  calendarTimeoutMs: number;
  calendarMaxBytes: number;
  /**
   * Untrusted calendars are parsed and expanded in a worker thread (modules/calendars/expand-pool.ts):
   * its deadline per calendar and its heap. A calendar that passes either is refused and not read
   * again until its owner changes it.
   */
  calendarExpandTimeoutMs: number;
  calendarExpandMemoryMb: number;
  /** Concurrent live streams one user may hold (every key and session together; across instances with Redis); 0 = no cap. */
  streamLimitPerUser: number;
  /** Every open stream's credential and orgs are checked again within this period (a lost access notice costs at most that); 0 = never. */
  streamRecheckMs: number;
  /** Inbound email (docs/integrations.md): the SMTP listener's port (unset: no listener) and host, the domain of integration and reply addresses, STARTTLS certificate files, size and rate limits. */
  inbound: {
    port: number | undefined;
    host: string;
    domain: string | undefined;
    tlsKey: string | undefined;
    tlsCert: string | undefined;
    maxBytes: number;
    perMinute: number;
    /** Mail authentication (SECURITY.md): relays whose Authentication-Results Muster takes (IPs or CIDRs, with their authserv-ids), and forwarders whose ARC seal it takes (signing domains). */
    trustedRelays: string[];
    relayAuthservIds: string[];
    trustedForwarders: string[];
  };
  /** Shortcut for inbound.domain: set when Muster gives out email addresses. */
  inboundEmailDomain: string | undefined;
  /**
   * The in-process cache of API keys, sessions and org memberships (modules/auth/credential-cache.ts):
   * how long an entry may serve without a new read (0 = no cache), and how many entries each part holds.
   */
  credentialCache: { ttlMs: number; maxEntries: number };
  /** Schedules whose on-call answer each instance keeps (modules/oncall/around-memo.ts); 0 = none. */
  oncallMemoSize: number;
  /** Stored report answers (modules/reports/stored-results.ts, docs/reports.md "Stored answers"). */
  reports: { storeAfterMs: number; maxAgeMs: number; maxStaleMs: number; freshWaitMs: number };
  /** Operations (issue #22, docs/operations.md): metrics token, scheduled backups, retention defaults and sweep. */
  ops: OpsConfig;
}

export interface OpsConfig {
  /** Bearer token of GET /metrics; unset: the endpoint answers 404. */
  metricsToken: string | undefined;
  /** Scheduled SQLite backups: target directory (unset: none), interval, how many to keep. */
  backupDir: string | undefined;
  backupIntervalMs: number;
  backupKeep: number;
  /** Instance default retention in days per kind (null: keep forever); each org may override. */
  retention: { signals_days: number | null; audit_days: number | null; uploads_days: number | null; closed_incidents_days: number | null; inbound_emails_days: number | null };
  retentionSweepIntervalMs: number;
  /** Rows deleted per transaction by the retention sweeper. */
  retentionBatch: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Reads and validates the environment once at boot; every problem is reported at the same time. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v === '' ? undefined : v;
  };

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };

  const bool = (name: string, fallback: boolean): boolean => {
    const raw = value(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };

  const port = int('PORT', 3000, 1, 65535);

  let publicUrl = value('PUBLIC_URL') ?? `http://localhost:${port}`;
  try {
    const u = new URL(publicUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    if (u.search || u.hash) throw new Error('query');
    publicUrl = u.toString().replace(/\/+$/, '');
  } catch {
    problems.push(`PUBLIC_URL must be an absolute http(s) URL without query or fragment (got "${publicUrl}")`);
  }

  const databaseUrl = value('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL; leave it unset for the embedded SQLite database');
  }

  const redisUrl = value('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push('REDIS_URL must be a redis:// or rediss:// URL; leave it unset for one instance');
  }
  const redisPrefix = value('REDIS_PREFIX') ?? 'muster:';
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(redisPrefix)) problems.push('REDIS_PREFIX must be 1-64 characters of letters, digits and : _ . -');

  const databaseSchema = value('DATABASE_SCHEMA');
  if (databaseSchema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(databaseSchema)) {
    problems.push(`DATABASE_SCHEMA must be a lower-case SQL identifier (got "${databaseSchema}")`);
  }

  const adminEmails = (value('MUSTER_ADMIN_EMAILS') ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  for (const e of adminEmails) {
    if (!/^[^@\s]+@[^@\s]+$/.test(e)) problems.push(`MUSTER_ADMIN_EMAILS holds "${e}", which is not an email address`);
  }

  const logLevelRaw = (value('LOG_LEVEL') ?? 'info').toLowerCase();
  const logLevel = LOG_LEVELS.find((l) => l === logLevelRaw);
  if (!logLevel) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevelRaw}")`);

  const smtpUrl = value('SMTP_URL');
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) problems.push('SMTP_URL must be an smtp:// or smtps:// URL');
  const urlOf = (name: string): string | undefined => {
    const raw = value(name);
    if (raw !== undefined && !/^https?:\/\/[^\s]+$/.test(raw)) problems.push(`${name} must be an http(s) URL`);
    return raw;
  };
  const phoneWebhookUrl = urlOf('MUSTER_PHONE_WEBHOOK_URL');
  const twilioApiUrl = urlOf('TWILIO_API_URL') ?? 'https://api.twilio.com';
  const [sid, token, from] = [value('TWILIO_ACCOUNT_SID'), value('TWILIO_AUTH_TOKEN'), value('TWILIO_FROM')];
  if ([sid, token, from].some((v) => v !== undefined) && [sid, token, from].some((v) => v === undefined)) {
    problems.push('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM go together: set all three or none');
  }
  const vapidSubject = value('VAPID_SUBJECT') ?? `mailto:admin@${(() => { try { return new URL(publicUrl).hostname; } catch { return 'localhost'; } })()}`;
  if (!/^(mailto:|https:)/.test(vapidSubject)) problems.push('VAPID_SUBJECT must be a mailto: or https: address');

  const embedAllowedOrigins = (value('EMBED_ALLOWED_ORIGINS') ?? '*').split(/[\s,]+/).filter(Boolean);
  for (const o of embedAllowedOrigins) {
    if (o !== '*' && o !== "'self'" && !/^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d+)?$/.test(o)) {
      problems.push(`EMBED_ALLOWED_ORIGINS holds "${o}": use * or origins like https://example.com, https://*.example.com`);
    }
  }
  const requestTimeoutMs = int('REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000);
  const headersTimeoutMs = Math.min(int('HEADERS_TIMEOUT_MS', 10_000, 1_000, 600_000), requestTimeoutMs);

  // MAP_TILE_URL set to an empty string means no tiles (markers on a plain background); unset, OpenStreetMap's.
  const rawTileUrl = env.MAP_TILE_URL;
  const mapTileUrl = rawTileUrl === undefined ? 'https://tile.openstreetmap.org/{z}/{x}/{y}.png' : rawTileUrl.trim();
  if (mapTileUrl !== '' && !/^(https?:\/\/|\/)[^\s]*\{z\}[^\s]*$/.test(mapTileUrl)) {
    problems.push('MAP_TILE_URL must be an http(s) URL or a path with {z}, {x} and {y}, or empty for no tiles');
  }
  const mapTileAttribution = value('MAP_TILE_ATTRIBUTION') ?? '&copy; OpenStreetMap contributors';

  const inboundPort = value('INBOUND_SMTP_PORT') === undefined ? undefined : int('INBOUND_SMTP_PORT', 2525, 0, 65535);
  const inboundDomain = value('INBOUND_EMAIL_DOMAIN')?.toLowerCase();
  if (inboundDomain !== undefined && !/^[a-z0-9.-]+\.[a-z]{2,}$|^localhost$/.test(inboundDomain)) problems.push(`INBOUND_EMAIL_DOMAIN must be a domain name (got "${inboundDomain}")`);
  if (inboundPort !== undefined && inboundDomain === undefined) problems.push('INBOUND_SMTP_PORT needs INBOUND_EMAIL_DOMAIN (the domain of the addresses Muster gives out)');
  const [tlsKey, tlsCert] = [value('INBOUND_SMTP_TLS_KEY'), value('INBOUND_SMTP_TLS_CERT')];
  if ((tlsKey === undefined) !== (tlsCert === undefined)) problems.push('INBOUND_SMTP_TLS_KEY and INBOUND_SMTP_TLS_CERT go together: set both (files) or neither');
  const inbound = {
    port: inboundPort,
    host: value('INBOUND_SMTP_HOST') ?? '0.0.0.0',
    domain: inboundDomain,
    tlsKey,
    tlsCert,
    maxBytes: int('INBOUND_MAX_BYTES', 10 * 1_048_576, 1024, 100 * 1_048_576),
    perMinute: int('INBOUND_RATE_LIMIT', 60, 0, 1_000_000),
    ...mailTrust(value, problems),
  };

  const config: Config = {
    port,
    host: value('HOST') ?? '0.0.0.0',
    publicUrl,
    dataDir: path.resolve(value('DATA_DIR') ?? './data'),
    databaseUrl,
    databaseSchema,
    redisUrl,
    redisPrefix,
    adminEmails,
    logLevel: logLevel ?? 'info',
    trustProxy: bool('TRUST_PROXY', false),
    bodyLimit: int('BODY_LIMIT_BYTES', 1_048_576, 1024, 100 * 1_048_576),
    sessionTtlMs: 14 * 24 * 60 * 60 * 1000,
    secureCookies: publicUrl.startsWith('https:'),
    sseHeartbeatMs: int('SSE_HEARTBEAT_MS', 25_000, 10, 3_600_000),
    sseReplayMs: int('SSE_REPLAY_MS', 300_000, 1_000, 86_400_000),
    sseMaxBufferBytes: int('SSE_MAX_BUFFER_BYTES', 1_048_576, 1_024, 1_073_741_824),
    slaSweepIntervalMs: int('SLA_SWEEP_INTERVAL_MS', 30_000, 100, 3_600_000),
    pagingSweepIntervalMs: int('PAGING_SWEEP_INTERVAL_MS', 5_000, 100, 3_600_000),
    beaconTimeoutMs: int('BEACON_TIMEOUT_MS', 300_000, 1_000, 86_400_000),
    beaconSweepIntervalMs: int('BEACON_SWEEP_INTERVAL_MS', 15_000, 100, 3_600_000),
    beaconFlushMs: int('BEACON_FLUSH_MS', 1_000, 10, 60_000),
    trackMoveMs: int('TRACK_MOVE_MS', 60_000, 10, 3_600_000),
    smtpUrl,
    mailFrom: value('MAIL_FROM') ?? 'Muster <no-reply@localhost>',
    allowPrivateWebhooks: bool('MUSTER_ALLOW_PRIVATE_WEBHOOKS', false),
    webhookTimeoutMs: int('WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000),
    vapidSubject,
    twilio: sid && token && from ? { accountSid: sid, authToken: token, from, apiUrl: twilioApiUrl.replace(/\/+$/, '') } : undefined,
    phoneWebhookUrl,
    phoneDailyCap: int('PHONE_DAILY_CAP', 20, 0, 10_000),
    outboxPollMs: int('OUTBOX_POLL_MS', 1_000, 10, 600_000),
    rateLimit: {
      windowMs: int('RATE_LIMIT_WINDOW_MS', 60_000, 1_000, 3_600_000),
      api: int('RATE_LIMIT_API', 600, 0, 1_000_000),
      auth: int('RATE_LIMIT_AUTH', 10, 0, 1_000_000),
      booking: int('RATE_LIMIT_BOOKING', 20, 0, 1_000_000),
      public: int('RATE_LIMIT_PUBLIC', 300, 0, 1_000_000),
      device: int('RATE_LIMIT_DEVICE', 120, 0, 1_000_000),
      // Failed sign-in tries per account (normalised email) and door (password, emailed codes); 0 = off.
      account: int('RATE_LIMIT_ACCOUNT', 10, 0, 1_000_000),
      accountWindowMs: int('RATE_LIMIT_ACCOUNT_WINDOW_MS', 900_000, 1_000, 86_400_000),
    },
    idempotencyLockTimeoutMs: int('IDEMPOTENCY_LOCK_TIMEOUT_MS', 60_000, 100, 3_600_000),
    embedAllowedOrigins,
    requestTimeoutMs,
    headersTimeoutMs,
    mapTileUrl,
    mapTileAttribution,
    calendarSyncIntervalMs: int('CALENDAR_SYNC_INTERVAL_MS', 300_000, 1_000, 86_400_000),
    calendarTimeoutMs: int('CALENDAR_TIMEOUT_MS', 10_000, 100, 120_000),
    calendarMaxBytes: int('CALENDAR_MAX_BYTES', 5 * 1_048_576, 1_024, 100 * 1_048_576),
    calendarExpandTimeoutMs: int('CALENDAR_EXPAND_TIMEOUT_MS', 10_000, 100, 300_000),
    calendarExpandMemoryMb: int('CALENDAR_EXPAND_MEMORY_MB', 128, 16, 4_096),
    streamLimitPerUser: int('STREAM_LIMIT_PER_USER', 30, 0, 100_000),
    streamRecheckMs: int('STREAM_RECHECK_MS', 30_000, 0, 3_600_000),
    inbound,
    inboundEmailDomain: inbound.domain,
    credentialCache: { ttlMs: int('CREDENTIAL_CACHE_TTL_MS', 5_000, 0, 60_000), maxEntries: int('CREDENTIAL_CACHE_SIZE', 10_000, 1, 1_000_000) },
    oncallMemoSize: int('ONCALL_MEMO_SIZE', 10_000, 0, 1_000_000),
    reports: {
      storeAfterMs: int('REPORT_STORE_AFTER_MS', 250, 0, 3_600_000),
      maxAgeMs: int('REPORT_MAX_AGE_SECONDS', 60, 1, 86_400) * 1000,
      maxStaleMs: int('REPORT_MAX_STALE_SECONDS', 600, 1, 86_400) * 1000,
      freshWaitMs: int('REPORT_FRESH_WAIT_MS', 250, 0, 60_000),
    },
    ops: opsConfig(value, int, problems, databaseUrl),
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

const list = (raw: string | undefined) => (raw ?? '').split(',').map((v) => v.trim().toLowerCase()).filter((v) => v !== '');

/** INBOUND_TRUSTED_RELAYS (IPs or CIDRs) with INBOUND_TRUSTED_AUTHSERV_IDS, and INBOUND_TRUSTED_FORWARDERS (ARC signing domains). */
function mailTrust(value: (name: string) => string | undefined, problems: string[]) {
  const trustedRelays = list(value('INBOUND_TRUSTED_RELAYS'));
  for (const r of trustedRelays) {
    const [ip, bits, extra] = r.split('/');
    const family = isIP(ip ?? '');
    const width = family === 4 ? 32 : 128;
    if (family === 0 || extra !== undefined || (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= width))) {
      problems.push(`INBOUND_TRUSTED_RELAYS must list IP addresses or CIDR ranges (got "${r}")`);
    }
  }
  const relayAuthservIds = list(value('INBOUND_TRUSTED_AUTHSERV_IDS'));
  if ((trustedRelays.length === 0) !== (relayAuthservIds.length === 0)) {
    problems.push('INBOUND_TRUSTED_RELAYS and INBOUND_TRUSTED_AUTHSERV_IDS go together: the relays, and the name their Authentication-Results header carries');
  }
  const trustedForwarders = list(value('INBOUND_TRUSTED_FORWARDERS'));
  for (const f of trustedForwarders) if (!/^[a-z0-9.-]+\.[a-z]{2,}$/.test(f)) problems.push(`INBOUND_TRUSTED_FORWARDERS must list domain names (got "${f}")`);
  return { trustedRelays, relayAuthservIds, trustedForwarders };
}

/** OPS settings (issue #22): METRICS_TOKEN, BACKUP_*, RETENTION_*. */
function opsConfig(
  value: (name: string) => string | undefined,
  int: (name: string, fallback: number, min: number, max: number) => number,
  problems: string[],
  databaseUrl: string | undefined,
): OpsConfig {
  const metricsToken = value('METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) problems.push('METRICS_TOKEN must be at least 16 characters');
  const backupDir = value('BACKUP_DIR');
  if (backupDir !== undefined && databaseUrl !== undefined) problems.push('BACKUP_DIR backs up the embedded SQLite database; with DATABASE_URL use pg_dump (docs/operations.md)');
  const days = (name: string): number | null => {
    const raw = value(name);
    if (raw === undefined || raw.toLowerCase() === 'forever') return null;
    return int(name, 0, 1, 36_500);
  };
  return {
    metricsToken,
    backupDir: backupDir === undefined ? undefined : path.resolve(backupDir),
    backupIntervalMs: int('BACKUP_INTERVAL_HOURS', 24, 1, 8_760) * 3_600_000,
    backupKeep: int('BACKUP_KEEP', 7, 1, 10_000),
    retention: {
      signals_days: days('RETENTION_SIGNALS_DAYS'),
      audit_days: days('RETENTION_AUDIT_DAYS'),
      uploads_days: days('RETENTION_UPLOADS_DAYS'),
      closed_incidents_days: days('RETENTION_CLOSED_INCIDENTS_DAYS'),
      inbound_emails_days: days('RETENTION_INBOUND_EMAILS_DAYS'),
    },
    retentionSweepIntervalMs: int('RETENTION_SWEEP_INTERVAL_MS', 3_600_000, 1_000, 86_400_000),
    retentionBatch: int('RETENTION_BATCH', 500, 1, 100_000),
  };
}
