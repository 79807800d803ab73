import { sql } from 'kysely';
import type { AppContext } from '../../context.js';
import type * as PromClient from 'prom-client';
import { lazyRequire } from '../../lib/lazy-require.js';
import { redisStatus } from '../../lib/redis.js';

// prom-client (with @opentelemetry/api, 80-odd modules) loads when a context's metrics are first
// used (the first counted beacon, delivery or job run, or GET /metrics), not at every start.
const promClient = lazyRequire<typeof PromClient>('prom-client');

/**
 * The instance's Prometheus metrics (issue #22), one registry per context so several apps in one
 * process (tests) never share counts. Counters are incremented where things happen (one line at
 * each call site); gauges of stored state are read from the database when Prometheus scrapes, so
 * no write path pays for them.
 */
export interface Metrics {
  registry: PromClient.Registry;
  httpDuration: RequestHistogram;
  beacons: PromClient.Counter;
  deliveries: PromClient.Counter<'kind' | 'outcome'>;
  jobRuns: PromClient.Counter<'job' | 'outcome'>;
  slaBreaches: PromClient.Counter;
  backups: PromClient.Counter<'outcome'>;
  lastBackup: PromClient.Gauge;
  retentionDeleted: PromClient.Counter<'kind'>;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One series of the request histogram: counts per bucket (not cumulative), their sum and count. */
interface Series {
  readonly labels: { method: string; route: string; status_class: string };
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * `http_request_duration_seconds`, kept by hand rather than by prom-client's Histogram, whose
 * `observe` builds a label object, validates it and hashes it into a string key on every call
 * (about 0.7 µs a request). Here a request finds its series through two maps keyed by strings
 * Fastify already holds (the route pattern, the method: their hashes are cached), then one index
 * by status class, and adds to plain numbers: no allocation per request. Prometheus reads it
 * through the registry like any metric (the same text as prom-client's histogram).
 */
export class RequestHistogram {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'HTTP requests by method, route pattern and status class';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #byRoute = new Map<string, Map<string, (Series | undefined)[]>>();

  observe(method: string, route: string, statusCode: number, seconds: number): void {
    let byMethod = this.#byRoute.get(route);
    if (byMethod === undefined) this.#byRoute.set(route, (byMethod = new Map<string, (Series | undefined)[]>()));
    let classes = byMethod.get(method);
    if (classes === undefined) byMethod.set(method, (classes = [undefined, undefined, undefined, undefined, undefined, undefined]));
    const c = statusCode >= 100 && statusCode < 600 ? Math.floor(statusCode / 100) - 1 : 5;
    let series = classes[c];
    if (series === undefined) {
      classes[c] = series = { labels: { method, route, status_class: STATUS_CLASSES[c] ?? 'other' }, counts: new Float64Array(DURATION_BUCKETS.length), sum: 0, count: 0 };
    }
    let b = 0;
    while (b < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[b]!) b++;
    if (b < DURATION_BUCKETS.length) series.counts[b]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** The values as prom-client's registry prints them (cumulative buckets, +Inf, _sum, _count). */
  getForPromString() {
    const values: { labels: Record<string, string | number>; sharedLabels: Record<string, string>; value: number; metricName: string }[] = [];
    for (const byMethod of this.#byRoute.values()) {
      for (const classes of byMethod.values()) {
        for (const s of classes) {
          if (s === undefined) continue;
          let acc = 0;
          DURATION_BUCKETS.forEach((le, i) => {
            acc += s.counts[i]!;
            values.push({ labels: { le }, sharedLabels: s.labels, value: acc, metricName: `${this.name}_bucket` });
          });
          values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_bucket` });
          values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
          values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's get(): each value's labels with the series' labels spread in. */
  get() {
    const data = this.getForPromString();
    return { ...data, values: data.values.map(({ labels, sharedLabels, ...v }) => ({ ...v, labels: { ...labels, ...sharedLabels } })) };
  }

  reset(): void {
    this.#byRoute.clear();
  }
}

const byContext = new WeakMap<object, Metrics>();

/** The metrics of a context, made on first use. */
export function metricsOf(ctx: AppContext): Metrics {
  let m = byContext.get(ctx);
  if (!m) {
    m = createMetrics(ctx);
    byContext.set(ctx, m);
  }
  return m;
}

const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
const OUTBOX_KINDS = ['email', 'webhook', 'push', 'phone', 'calendar'] as const;
const FAR_FUTURE = '9999-12-31T23:59:59.999Z';

function createMetrics(ctx: AppContext): Metrics {
  const client = promClient();
  const registry = new client.Registry();
  const registers = [registry];
  const m: Metrics = {
    registry,
    httpDuration: new RequestHistogram(),
    beacons: new client.Counter({ name: 'muster_beacons_total', help: 'Beacon signals accepted', registers }),
    deliveries: new client.Counter({ name: 'muster_deliveries_total', help: 'Delivery attempts by kind and outcome', labelNames: ['kind', 'outcome'], registers }),
    jobRuns: new client.Counter({ name: 'muster_job_runs_total', help: 'Background job runs by job and outcome', labelNames: ['job', 'outcome'], registers }),
    slaBreaches: new client.Counter({ name: 'muster_sla_breaches_total', help: 'Incidents that passed their SLA (counted once each by the sweeper)', registers }),
    backups: new client.Counter({ name: 'muster_backups_total', help: 'Scheduled backups by outcome', labelNames: ['outcome'], registers }),
    lastBackup: new client.Gauge({ name: 'muster_backup_last_success_timestamp_seconds', help: 'When the last scheduled backup succeeded (0: none yet)', registers }),
    retentionDeleted: new client.Counter({ name: 'muster_retention_deleted_total', help: 'Rows and files removed by retention, by kind', labelNames: ['kind'], registers }),
  };

  registry.registerMetric(m.httpDuration as unknown as PromClient.Metric);

  new client.Gauge({
    name: 'muster_sse_subscribers',
    help: 'Open live streams on this instance by channel',
    labelNames: ['channel'],
    registers,
    collect() {
      this.reset();
      for (const [channel, n] of ctx.events.hub.subscribersByChannel()) this.set({ channel }, n);
    },
  });

  // Both outbox gauges read one query per scrape (the registry collects them concurrently).
  let outboxRead: Promise<{ kind: string; n: number; oldest: string }[]> | undefined;
  const readOutbox = () =>
    (outboxRead ??= ctx.db
      .selectFrom('outbox')
      .select(['kind', sql<number>`count(*)`.as('n'), sql<string>`min(created_at)`.as('oldest')])
      .where('status', 'in', ['pending', 'sending'])
      .groupBy('kind')
      .execute()
      .finally(() => (outboxRead = undefined)));
  new client.Gauge({
    name: 'muster_outbox_pending',
    help: 'Deliveries not yet settled (pending or being sent) by kind',
    labelNames: ['kind'],
    registers,
    async collect() {
      const rows = await readOutbox();
      for (const kind of OUTBOX_KINDS) this.set({ kind }, Number(rows.find((r) => r.kind === kind)?.n ?? 0));
    },
  });
  new client.Gauge({
    name: 'muster_outbox_oldest_age_seconds',
    help: 'Age of the oldest undelivered delivery by kind (0: none)',
    labelNames: ['kind'],
    registers,
    async collect() {
      const rows = await readOutbox();
      const now = ctx.clock.now().getTime();
      for (const kind of OUTBOX_KINDS) {
        const row = rows.find((r) => r.kind === kind);
        this.set({ kind }, row ? Math.max(0, (now - Date.parse(row.oldest)) / 1000) : 0);
      }
    },
  });

  new client.Gauge({
    name: 'muster_incidents_open',
    help: 'Live incidents open or in progress by priority',
    labelNames: ['priority'],
    registers,
    async collect() {
      const rows = await ctx.db
        .selectFrom('incident_counts')
        .select(['priority', sql<number>`sum(n)`.as('n')])
        .where('livemode', '=', 1)
        .where('status', 'in', ['open', 'in_progress'])
        .groupBy('priority')
        .execute();
      for (const priority of PRIORITIES) this.set({ priority }, Number(rows.find((r) => r.priority === priority)?.n ?? 0));
    },
  });

  new client.Gauge({
    name: 'muster_active_devices',
    help: 'Devices currently beaconing (every instance, both modes)',
    registers,
    async collect() {
      this.set((await ctx.beacons.silent(ctx.db, FAR_FUTURE, 1_000_000)).length);
    },
  });

  new client.Gauge({
    name: 'muster_database_up',
    help: '1 when the database answers a query',
    registers,
    async collect() {
      this.set(await ctx.database.ping().then(() => 1, () => 0));
    },
  });
  new client.Gauge({
    name: 'muster_db_pool_connections',
    help: 'PostgreSQL pool connections by state (total, idle, waiting clients); absent on SQLite',
    labelNames: ['state'],
    registers,
    collect() {
      const stats = ctx.database.poolStats?.();
      if (!stats) return;
      for (const [state, n] of Object.entries(stats)) this.set({ state }, n);
    },
  });
  new client.Gauge({
    name: 'muster_redis_up',
    help: '1 when Redis is connected, 0 while it is unreachable, -1 without REDIS_URL',
    registers,
    collect() {
      const s = redisStatus(ctx.redis);
      this.set(s === 'ok' ? 1 : s === 'down' ? 0 : -1);
    },
  });

  // Node's process metrics only when metrics are served: their event-loop monitor costs a little.
  if (ctx.config.ops.metricsToken) client.collectDefaultMetrics({ register: registry });
  return m;
}
