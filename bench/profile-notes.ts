// What the profiles of the hot paths showed (issue #19), written by hand and kept beside the figures
// that `npm run bench` measures. CPU per request comes from bench/cpu-per-request.ts (server CPU by
// process.cpuUsage over N requests, the load in other processes). Each note says the load it was
// measured at: under load the figures move by about 15 % between runs, so compare within one row.

const CPU_COMMAND = '`npx tsx bench/cpu-per-request.ts --requests 20000` (add `--profile DIR` for a .cpuprofile of the measured requests only)';

export const AUTH_ME_PROFILE = [
  '### Profile (2026-11-24, afternoon)',
  '',
  `Server CPU per request, ${CPU_COMMAND} with \`auth-me bare fastify\`, twice on a quiet machine (load average 1.2-1.5):`,
  'Muster 66.2 / 65.4 µs; bare `node:http` answering the same bytes 34.8 / 34.2 µs; the same bare server sending the 11',
  'headers of Muster\'s answer too 47.5 / 46.5 µs; Fastify alone, one route and no plugins, 42.5 / 43.0 µs. So of the',
  'about 31 µs between Muster and bare `node:http`, the header set every answer carries (security headers, rate limit,',
  'request id, cache-control: docs/api.md) is about 12 µs of node:http\'s own work (it validates and writes each), Fastify',
  'about 8 µs, and Muster\'s own steps (authentication from memory, the rate limit, the hooks, the schema\'s serialiser)',
  'the rest, about 11 µs. A CPU ratio of 52 % to the baseline is what the req/s ratio tends to when the server\'s core is',
  'the limit; the load generator shares the cores, so the ratio of one run moves by several points.',
  '',
  'What changed this afternoon (back to back with the morning\'s build, load 1.1-1.4: 81.8-97.8 µs before, 63.8-66.3 after;',
  'docs/architecture.md, "The request path\'s fixed costs"): the security headers\' onRequest set `nosniff` on the raw',
  'response, which sent Node\'s `writeHead` down its slow path (every header of the reply validated and copied through',
  '`setHeader`); live streams now send it in their own head. `request.routeOptions`, a getter that builds a',
  'thirteen-field object per read, is read once per request (`routeOf`), and the rate-limit group is decided once per',
  'route and method. The key\'s SHA-256 is kept by the key\'s text (it was a tenth of the request). No child logger per',
  'request when nothing is logged; the clock in milliseconds (no `Date`); the Idempotency-Key hooks only on the four',
  'routes that take one; the request id set in the one onSend with the security headers; the route answers a plain value',
  'when the user\'s row is held (no promise). Earlier today: the `me` view written out instead of spread (89.0 -> 65.6 µs',
  'on the morning\'s build; docs/architecture.md, "Object spread on hot paths"), the AsyncLocalStorage of',
  'db/group-commit.ts gone.',
  '',
  'Top self time now (`--profile`, compared function by function with the bare server sending the same headers): beyond',
  'the write itself, no single step of Muster\'s is over 1 µs: the rate limit\'s count and headers, the security headers\'',
  'loop, the credential look-up, Fastify\'s hook runner and routing, each 0.3-0.7 µs.',
].join('\n');

export const TRACKERS_PROFILE = [
  '### Profile (2026-11-24, afternoon)',
  '',
  `Server CPU per request, ${CPU_COMMAND} with \`trackers bare fastify\`, twice on a quiet machine (load average 1.2-1.5):`,
  '89.8 µs per fix both times; bare `node:http` answering the empty 200 29.0 / 29.6 µs; Fastify alone 36.8 / 33.8 µs. No',
  'SQL statement per fix. About 54 µs per fix is Muster\'s: the header set of every answer (the table\'s third row gives',
  'its share of throughput), the hooks, and the fix itself (the query\'s parsing and checks, the token\'s cache look-up,',
  'the per-device count, the beacon state and the event). This afternoon\'s request-path changes (auth-me\'s note) gave the',
  'fix less than auth-me (back to back: 86-94 µs before, 84-85 after): a tracker route is public (no key to hash) and',
  'counts its own requests; a known token is now counted without a promise (`asDevice` in trackers.routes.ts).',
  '',
  'What went this morning: the generic signal built, validated and serialised for every fix (the tracker path hands its',
  'checked fix to the beacon path, `postBeacon`: one JSON of the meta, one Date and one ISO text per fix); object literals',
  'that spread and then add keys (about 1 µs per added key on this V8); the SHA-256 of a token the device cache knows',
  '(kept by its text too; every access notice is applied to both maps); the promise of a ping of a device that is on',
  '(`pingActive`, synchronous); the `signal.beacon` frame when no stream listens (the hub serialises an event when a',
  'stream or a resume first needs it, once); the copy of the query; `fieldWithNul` building a path per field.',
  '',
  'Top self time now (`--profile`, share of busy samples): the answer\'s write (`writeLatin1String`: the syscall, and the',
  'time the server waits for a core while the load generator it just woke runs) about half, the HTTP parser 9 %, node:http',
  'validating and writing the headers 6 %, `postBeacon` 4 % (the meta\'s JSON, the org access and owner\'s name from memory),',
  'the route 3 %, GC 3 %, microtasks 2 %, routing 2 %, the security headers 2 %, the query parser 1 %.',
].join('\n');

export const BEACONS_PROFILE = [
  '### Profile (2026-11-24)',
  '',
  `Server CPU per request with 10 stream subscribers, ${CPU_COMMAND}, same run, load average 21 to 25:`,
  'before 651 µs and 2 SQL statements per beacon (the org with its lock, the user\'s name); after 391 µs and none.',
  'What is left is mostly writing: the answer and the 10 frames (`writev` 28 % and `writeLatin1String` 7 % of busy',
  'samples before; the frames are the same after), then GC, Fastify and the hooks.',
].join('\n');

/** bench/profile-incidents.ts: the incident list and creation (written by hand, printed by the incidents benchmark). */
const INCIDENTS_PROFILE_INTRO = [
  "### Incidents: profile notes (issue #19, 2026-11-24; load average 15-24 on 2 cores, so read shares and counts, not absolute times)",
  "",
  "Measured with `npx tsx bench/profile-incidents.ts [--rows N] [--n N] [--timing] [--prof DIR] [list|create]`: a real",
  "Muster (as `startMuster` builds it), N requests from a separate load process over 10 keep-alive connections, CPU of the",
  "server process by `process.cpuUsage` per batch of 250, SQL statements counted through `onQuery`, `--timing` the CPU of",
  "each statement inside better-sqlite3, `--prof` a CPU profile of the measured requests only (node:inspector). With the",
  "machine at load 15-24 the CPU per request swung by +-50 % between identical runs (a bare `select 1` took 3.9 us of CPU",
  "instead of about 1), so the before/after figures below are statement counts and same-process micro-measurements.",
].join('\n');

/** The list (GET /v1/tickets) part of the incidents profile notes. */
const INCIDENT_LIST_PROFILE = [
  "**GET /v1/tickets?limit=50** (200k rows; plans checked at 1M with EXPLAIN QUERY PLAN: the page walks",
  "`incidents_scope_idx` backwards, the total sums `incident_counts` rows). Before: 2 statements per request (page, total;",
  "the key and memberships come from the credential cache). Top self time: better-sqlite3 reading the page",
  "(`executeQuery`/`all`, 27 %), socket `writev` 10 %, HTTP parsing 8 %, GC 6 %, fast-json-stringify 5 %, `toIncident` 3 %,",
  "Kysely building and compiling 3-5 %. The page's query was the largest single cost, and most of it was better-sqlite3",
  "building one object with 26 named properties per row: at 1M rows, in one process, `select *` 716 us CPU, the 21 columns",
  "the view reads as objects 578 us, the same as arrays (raw mode) 276 us; `toIncident` for 50 rows 45 us; fast-json-stringify",
  "98 us, a hand-built string 172 us (so the schema serializer stays). Change: the list selects the 21 view columns, on",
  "SQLite as arrays (`ROWS_AS_ARRAYS` in src/db/database.ts; still through Kysely's one connection, so never inside an open",
  "group of commits), turned into objects in JS. Still 2 statements per request; `with_counts` already runs only when asked.",
  "Then (issue 19, list branch): `sort=priority` sorted every row of the org (TEMP B-TREE; 0.9 s of CPU per request at 1M).",
  "Migration 0018 adds `incidents_priority_rank_idx` on (org_id, livemode, the rank `case priority ...`, id desc); the plan is",
  "now `SEARCH incidents USING INDEX incidents_priority_rank_idx (org_id=? AND livemode=?)` with no temp b-tree (PostgreSQL:",
  "Index Scan, no Sort; list-plan.test.ts asserts both). `profile-incidents.ts --rows 200000 list-priority`, load 16-17:",
  "162,443 us CPU per request before, 3,862 after. `sort=sla_due` already walks `incidents_sla_due_list_idx` (0010) and sorts",
  "only equal due times by id (USE TEMP B-TREE FOR LAST TERM): left. With two orgs in scope every sort adds a bounded top-N",
  "sort over the orgs' index walks (SQLite stops each walk early). Default list: the page and total statements are compiled",
  "once per shape (Kysely built and compiled them per request) and `toIncident` is written out without a spread; in one",
  "process, A/B interleaved at load 12-15: page statement 28.7 -> 0.7 us, total 25.4 -> 11.6 us, toIncident x50 27.4 ->",
  "18.4 us, about 50 us per request in all. The HTTP figures at load 16 (2,816 us before, 3,127 after, --n 1000) are within",
  "the noise of that load. What limits the list now: better-sqlite3 making ~700 strings per page (the 21 columns as arrays,",
  "111 us alone in one quiet process), socket writev of the 30 KB answer, Fastify and HTTP parsing, GC, and",
  "fast-json-stringify (~70 us); Kysely is off the list's path but for its executeQuery.",
  "Then (issue 19, list cache, docs/architecture.md \"Incident list cache\"): none of those costs could fall by the 2x the",
  "goal needed, so a page is now kept as its serialised bytes and answered again while the org's list version (one point",
  "read, before the rows) and the clock (the page's next SLA transition) allow. A hit costs the credential cache, that read",
  "(on SQLite with `data_version` in the same statement), Fastify, and the write of the bytes; a miss what the table with",
  "the cache keeping nothing shows. Writing the version took a second finding: on SQLite a trigger on `incidents` that",
  "writes another table makes every triggering statement keep a statement journal of the pages it changes. On the real",
  "schema (`npx tsx bench/trigger-cost.ts`, 240k rows, 3 alternating rounds): an insert alone 11.9-13.0 us, plus the",
  "upsert as a second statement 13.5-14.4, with a trigger doing it 56.6-57.6 (`temp_store = MEMORY` 21.6-22.7); other",
  "trigger bodies (update alone, insert-or-ignore plus update, a table without NOT NULL) cost the same in a first probe. So",
  "on SQLite inserts and touches bump in the code and triggers cover only updates of listed columns and deletes;",
  "PostgreSQL bumps in a deferred trigger at COMMIT.",
].join('\n');

/** The creation (POST /v1/tickets) part. */
const INCIDENT_CREATE_PROFILE = [
  "**POST /v1/tickets** (`{title, priority: 'high'}`; `npx tsx bench/profile-incidents.ts --rows 200000 --n 3000 create`).",
  "Earlier: 11.33 statements per creation, then 9.38 (the `created` event built from the values written, the push and the",
  'phone alert in one INSERT with the cap still decided first under the user\'s lock). Now 7.35-7.40: the org check comes',
  'from the credential cache (`targetOrgWrite`, as beacons: membership and lock, dropped on every instance when a',
  'membership, the owner\'s plan or the billing owner changes) and the creator\'s name and phone from the user cache, so a',
  'creation reads no org, membership or user row; the incident insert, counter upsert, timeline and outbox inserts, the',
  'escalation-setting read and the savepoints are compiled once (src/db/fixed.ts) instead of built by Kysely per request;',
  'one view serves the event and the answer; and src/db/group-commit.ts guards nested transactions without',
  'AsyncLocalStorage (which turned promise hooks on for the whole process). CPU per creation, before and after in',
  'alternate runs on 2 shared cores at load 9-20 (other helpers\' work): before 4,434 / 4,639 / 4,773 / 5,084 us (batch',
  'medians 4,459-5,599 us), after 2,379 / 3,582 us (batch medians 2,422 / 3,359 us); Kysely\'s self time in the profile',
  'fell from 16.8 % to 7.4 % of samples and async_hooks from 2.7 % to 0. CPU by statement now (`--timing`, load 20): the',
  'incident insert (11 indexes, one on a random token) about 500 us, COMMIT and BEGIN about 425 us per group, the outbox,',
  'timeline and counter inserts 75-130 us each, the escalation-setting read 70 us. What limits it now: SQLite itself',
  '(better-sqlite3 `run`/`all` about 40 % of samples, most of it the incident insert\'s index maintenance and the commit\'s',
  'WAL write), then Fastify and HTTP. Not reached on this loaded machine: the 0.4 ms goal; the ratio to bare needs a quiet',
  '`npm run bench`.',
].join('\n');

export const INCIDENTS_PROFILE = [INCIDENTS_PROFILE_INTRO, INCIDENT_LIST_PROFILE, INCIDENT_CREATE_PROFILE].join('\n\n');
