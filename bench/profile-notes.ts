// What the profiles of the hot paths showed (issue #19), written by hand and kept beside the figures
// that `npm run bench` measures. CPU per request comes from bench/cpu-per-request.ts (server CPU by
// process.cpuUsage over N requests, the load in other processes). Each note says the load it was
// measured at: under load the figures move by about 15 % between runs, so compare within one row.

const CPU_COMMAND = '`npx tsx bench/cpu-per-request.ts --requests 20000` (add `--profile DIR` for a .cpuprofile of the measured requests only)';

export const AUTH_ME_PROFILE = [
  '### Profile (2026-11-24)',
  '',
  `Server CPU per request, ${CPU_COMMAND} with \`auth-me bare fastify\`, on a quiet machine (load average about 1):`,
  'Muster 68.1 µs; bare `node:http` answering the same bytes 32.0 µs; Fastify alone, one route and no plugins, 36.1 µs.',
  'So Fastify costs about 4 µs over `node:http` and Muster\'s own work (the hooks, the key\'s hash and cache look-up, the',
  'answer\'s schema) about 32 µs over Fastify. A CPU ratio of 47 % to the baseline is what the req/s ratio tends to when',
  'the server\'s core is the limit; the load generator shares the cores, so the ratio of one run moves between about 40',
  'and 53 % (53 % in a single `npm run bench -- auth-me` at load 1 this morning, 41 % in a full run started at load 3).',
  '',
  'What changed this session: the `me` view was built as `{ ...toUser(u), phone, admin, ... }`. On Node 20 (V8 11.3)',
  'adding properties to an object made by spread makes a new hidden class every time (about 1 µs a property; see',
  'docs/architecture.md, "Object spread on hot paths"): written out, 89.0 -> 65.6 µs per request, back to back at load',
  '0.7. The AsyncLocalStorage of db/group-commit.ts, which turned promise hooks on for every request of the process, is',
  'gone. Earlier: the user row from the user cache (no query), hooks made synchronous.',
  '',
  'Top self time after the `me` change (`--profile`, load 0.9; shares of busy samples): the answer\'s `writev` (kernel',
  'time) about two thirds, the HTTP parser 7 %, GC 4 %, node:http\'s header writing 4 %; each of Muster\'s hooks and',
  'Fastify\'s reply under 1 %.',
].join('\n');

export const TRACKERS_PROFILE = [
  '### Profile (2026-11-24)',
  '',
  `Server CPU per request, ${CPU_COMMAND} with \`trackers --requests 30000\`, the code before and after this change run`,
  'one after the other: at load average 4.5 to 6, before 169 and 172 µs per fix, after 87, 101 and 103 µs; at load 11.7',
  'to 12.8, alternating before and after three times, before 233 to 313 µs (median 267), after 146 to 187 µs (median',
  '183). No SQL statement per fix either way. Bare `node:http` answering the empty 200: 31 to 37 µs; a bare Fastify app',
  'with the same 9 headers about 47 µs.',
  '',
  'What went: the generic signal built, validated and serialised for every fix (the tracker path now hands its checked',
  'fix to the beacon path, `postBeacon`: one JSON of the meta, one Date and one ISO text per fix); object literals that',
  'spread and then add keys (each a new hidden class, about 1 µs per added key on this V8); the SHA-256 of a token the',
  'device cache already knows (kept by its text too; every access notice is applied to both maps); the promise of a ping',
  'of a device that is on (`pingActive`, synchronous); the `signal.beacon` frame when no stream listens (the hub',
  'serialises an event when a stream or a resume first needs it, once); the copy of the query and the per-call arrays',
  'of the parameter reading; `fieldWithNul` building a path string for every field (it walks without paths first).',
  '',
  'Top self time after (share of busy samples): the answer\'s write (`writeLatin1String`, kernel time) 44 %, the HTTP',
  'parser\'s `dispatch` 8 %, GC 4 %, microtasks 2 %, `postBeacon` 2 % (the meta\'s JSON, the credential-cache reads of',
  'the org access and the owner\'s name), the route 2 %, `recordBeacon` 2 % (the ping, the bus, the hub), `ingest` 1 %.',
  'Fastify and the global hooks every route pays, in self time: Fastify 4 %, the rate limit with its LRU 2 %, routing',
  '1 %, security headers 1 %, the query parser 1 %, the request id 0.4 %; the rest is node:http and promise hooks.',
  '',
  'The same command on a quiet machine (load average about 1) after every change of this session was merged:',
  '85.5 µs per fix; bare `node:http` answering the empty 200 25.8 µs; Fastify alone, one route and no plugins, 31.5 µs.',
  'So about 54 µs per fix is Muster\'s: the global hooks every route pays (about 32 µs, as auth-me shows) and the fix',
  'itself (about 22 µs: parsing, the token\'s cache look-up, the beacon state, the event). The promise hooks named',
  'above are gone with the AsyncLocalStorage of db/group-commit.ts.',
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
