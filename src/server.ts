// Process entry: config -> context -> app -> listen, and a graceful stop on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from './config.js';
import { buildApp } from './app.js';
import { createContext } from './context.js';
import { startJobs } from './jobs/scheduler.js';
import { createSenders } from './jobs/outbox-senders.js';
import { startOutboxWorker } from './modules/deliveries/index.js';
import { claimDataDir } from './ops/instance-lock.js';
import { startInboundSmtp } from './modules/inbound-email/index.js';

// Milliseconds since the process began (performance's time origin): Node's boot and every import,
// which in ES modules all run before this line. The ready line logs each step of the start.
const importedAt = performance.now();

let config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}

const ctx = await createContext(config);
const contextAt = performance.now();
// `npm run db:restore` refuses while this file names a live process.
const releaseDataDir = claimDataDir(config.dataDir);
const app = await buildApp(ctx);
const appAt = performance.now();
const stopJobs = startJobs(ctx);
const stopWorker = startOutboxWorker(ctx, createSenders(ctx));
// Inbound email (INBOUND_SMTP_PORT): stored before 250, so stopping loses nothing accepted.
const inbound = config.inbound.port === undefined ? undefined : await startInboundSmtp(ctx);

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  ctx.log.info({ signal }, 'shutting down: finishing in-flight requests');
  // Never hang forever on a stuck connection.
  const force = setTimeout(() => {
    ctx.log.error('shutdown took over 10 s; exiting');
    process.exit(1);
  }, 10_000);
  force.unref();
  try {
    await stopJobs();
    await stopWorker();
    await inbound?.close();
    await app.close();
    await ctx.close();
    releaseDataDir();
    ctx.log.info('stopped');
    process.exit(0);
  } catch (err) {
    ctx.log.error({ err }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));

await app.listen({ port: config.port, host: config.host });
const round = (ms: number) => Math.round(ms * 10) / 10;
// The start's steps in ms: boot and imports, createContext (open, migrations, instance secret),
// buildApp (plugins, routes), then the jobs, the delivery worker and listen (bench/cold-start.bench.ts).
const startMs = { import: round(importedAt), context: round(contextAt - importedAt), app: round(appAt - contextAt), listen: round(performance.now() - appAt) };
ctx.log.info(
  { url: config.publicUrl, database: ctx.database.dialect, dataDir: config.dataDir, startMs },
  `Muster is ready at ${config.publicUrl} (API docs: ${config.publicUrl}/docs)`,
);
