// What the profiles of the hot paths showed (issue #19), written by hand and kept beside the figures
// that `npm run bench` measures. CPU per request comes from bench/cpu-per-request.ts (server CPU by
// process.cpuUsage over N requests, the load in other processes; the machine's load average was 15 to
// 25 on 2 cores, so the figures move by about 15 % between runs: compare within one row).

const CPU_COMMAND = '`npx tsx bench/cpu-per-request.ts --requests 20000` (add `--profile DIR` for a .cpuprofile of the measured requests only)';

export const AUTH_ME_PROFILE = [
  '### Profile (2026-11-24)',
  '',
  `Server CPU per request, ${CPU_COMMAND}, same run, load average about 24:`,
  'before the user row cache 251 µs and 1 SQL statement per request (the user row); after, 240 µs and none. Bare',
  '`node:http` answering the same bytes: 61 µs (69 µs with Muster\'s 12 response headers); bare Fastify, one route with',
  'a response schema and no plugins: 80 µs. So about 160 µs per request is Muster\'s own plugins and hooks over Fastify,',
  'and Fastify itself is already below the 50 % goal\'s budget (122 µs) on this machine only with nothing else.',
  '',
  'Top self time after (shares of busy samples): `writev` 36-43 % (the answer\'s write, kernel time under load),',
  'GC 6-14 %, Fastify\'s `Reply.header`/`hasHeader` 4-5 % (ratelimit, security and request-id headers), the',
  'request\'s child logger (pino `asChindings`, `createChildLogger`) 1.5 %, async-hook bookkeeping (`promiseInitHook`,',
  '`lookupPublicResource`: AsyncLocalStorage of db/group-commit.ts turns promise hooks on for the whole process)',
  'about 1.5 %, SHA-256 of the key 1 %, the hooks of auth, rate limit, CSRF, idempotency and security headers under 1 %',
  'each (now synchronous, without promises when they have nothing to do). Before, the user row query with Kysely\'s',
  'compilation was the largest piece of JavaScript (about 13 % with the profiler\'s own wrapper).',
].join('\n');

export const TRACKERS_PROFILE = [
  '### Profile (2026-11-24)',
  '',
  `Server CPU per request, ${CPU_COMMAND}, same run, load average 21 to 25:`,
  'before 498 µs and 2 SQL statements per fix (the org with its lock, the user\'s name); after 299 µs and none (the',
  'device, its owner\'s org access and name come from the device and credential caches; only a turn-on writes). Bare',
  '`node:http` answering the empty 200: 45 µs.',
  '',
  'Top self time after: the answer\'s write (`writeLatin1String`, kernel time) 35 %, GC 8 %, `createSignal` 3 %,',
  '`Reply.header` 3 %, `ingest` 3 %, the bus\'s publish 2 %, the fix\'s parsing (`compact`, `num`, `osmandToken`,',
  'fast-querystring) about 4 % together. Before, the two queries (Kysely compile and better-sqlite3) were about a third',
  'of the JavaScript time.',
].join('\n');

export const BEACONS_PROFILE = [
  '### Profile (2026-11-24)',
  '',
  `Server CPU per request with 10 stream subscribers, ${CPU_COMMAND}, same run, load average 21 to 25:`,
  'before 651 µs and 2 SQL statements per beacon (the org with its lock, the user\'s name); after 391 µs and none.',
  'What is left is mostly writing: the answer and the 10 frames (`writev` 28 % and `writeLatin1String` 7 % of busy',
  'samples before; the frames are the same after), then GC, Fastify and the hooks.',
].join('\n');
