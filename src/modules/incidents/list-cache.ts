
/**
 * Serialised pages of the incident list (issue 19), kept while they are still what the list would
 * answer. A page is the same bytes for everyone who may see it: the key holds the caller's resolved
 * scope (orgs and mode) and filter, never a credential; access is checked before the cache is asked.
 *
 * An entry is served only while
 * - the version of every org in the scope is the one read before its rows were (migration 0019:
 *   triggers bump it in every transaction that writes an incident, on every instance), and
 * - the clock has not reached the page's next SLA transition (`sla_status` is computed from the
 *   clock, sla.ts nextSlaChange) nor gone back before the page was built.
 * Bounded in entries and bytes; the least recently used go first.
 */
export class ListCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    public maxEntries = 1_000,
    public maxBytes = 16 * 1024 * 1024,
  ) {}

  /** New bounds, applied at once (0 entries: nothing is kept; the benchmark measures every request a miss). */
  resize(maxEntries: number, maxBytes: number): void {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    for (const [k] of this.#entries) {
      if (this.#entries.size <= maxEntries && this.#bytes <= maxBytes) break;
      this.#remove(k);
    }
  }

  get(key: string, version: string, now: number): Buffer | undefined {
    const e = this.#entries.get(key);
    if (e === undefined || e.version !== version || now >= e.expiresAt || now < e.builtAt) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last: eviction takes the first.
    this.#entries.delete(key);
    this.#entries.set(key, e);
    return e.body;
  }

  /** Keeps `body`, built at `builtAt` from rows read after `version` was, until `expiresAt`. */
  set(key: string, version: string, body: Buffer, builtAt: number, expiresAt: number): void {
    this.#remove(key);
    // A page larger than an eighth of the budget would evict most others for one caller: not kept.
    if (this.maxEntries === 0 || body.length > this.maxBytes / 8 || expiresAt <= builtAt) return;
    this.#entries.set(key, { version, body, builtAt, expiresAt });
    this.#bytes += body.length;
    for (const [k] of this.#entries) {
      if (this.#entries.size <= this.maxEntries && this.#bytes <= this.maxBytes) break;
      this.#remove(k);
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  #remove(key: string): void {
    const e = this.#entries.get(key);
    if (e === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= e.body.length;
  }
}

interface Entry {
  version: string;
  body: Buffer;
  builtAt: number;
  expiresAt: number;
}

