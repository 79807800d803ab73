import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.js';
import type { Mode } from '../../db/schema.js';
import type { UserRow } from './users.repository.js';
import type { AccessNotice } from '../../events/access.js';
import type { EventBus } from '../../events/bus.js';

/** What an API key (by the SHA-256 of its secret) resolves to. */
export interface KeyGrant {
  userId: number;
  mode: Mode;
  keyId: number;
}

/** What a session (by the SHA-256 of its cookie) resolves to; `expiresAt` in epoch ms. */
export interface SessionGrant {
  userId: number;
  expiresAt: number;
}

/** A user's memberships as the tenant scope reads them (modules/orgs/access.ts). */
export interface Memberships {
  orgIds: readonly number[];
  primaryOrgId: number | undefined;
}

/**
 * What a member may do in an org when posting into it (the beacon path, issue #19): its id, its
 * billing owner (whose plan decides the lock) and whether it is locked (over the owner's plan).
 */
export interface OrgWrite {
  orgId: number;
  ownerId: number | null;
  locked: boolean;
}

export interface CredentialCacheOptions {
  /** How long an entry serves without a new read; 0 turns the cache off. */
  ttlMs: number;
  /** Entries per part (keys, sessions, memberships, users, org writes); unknown credentials get a tenth of it. */
  maxEntries: number;
  /** Epoch ms, from the app clock (tests set it). */
  now: () => number;
  /** The bus's accessEpoch (events/bus.ts); absent on one instance. */
  accessEpoch?: (() => number | undefined) | undefined;
}

/** An entry and the span of the clock in which it may serve: [from, until). */
interface Held<V> {
  value: V;
  from: number;
  until: number;
}

/** Unknown credentials serve "unknown" at most this long, whatever the TTL. */
const UNKNOWN_MAX_MS = 1_000;

/**
 * API keys, sessions and org memberships in memory (issue #19), so that an authenticated request
 * does not read them from the database each time. Correctness rests on the access notices
 * (events/access.ts), not on the TTL:
 *
 * - Every notice drops the entries it covers at once: `{keyId}` the key, `{sessionId}` the
 *   session, `{userId, orgId}` the user's memberships and their write access to that org
 *   (published when one ends, changes role or begins), `{orgId}` the memberships that include the
 *   org and every org write access (a deleted org moves its owner's other orgs under or over the
 *   plan's limit), `{userId}` everything of the user, `{userRow}` the user's row and the write
 *   accesses to the orgs they own (a plan change locks or unlocks them).
 *   The bus hands a notice to this instance synchronously (after the change commits, before the
 *   answer is sent) and to the others through Redis.
 * - A read that was under way when any notice arrived is used for its request but not kept: it
 *   may predate the change the notice announces (the generation counter).
 * - While this instance may be missing other instances' notices (Redis subscriber down) it
 *   serves nothing from memory, and when hearing resumes it drops everything it held.
 * - The TTL (CREDENTIAL_CACHE_TTL_MS, 5 s by default) bounds what a notice lost in transit can
 *   cost; a session entry also ends at the session's expiry.
 * - Each part is an LRU of `maxEntries`; unknown credentials are remembered in a separate, smaller
 *   LRU for at most a second, so random keys can neither push real entries out nor grow memory,
 *   and a credential created later is never refused for longer than that.
 */
export class CredentialCache {
  private readonly keys: LRUCache<string, Held<KeyGrant>>;
  private readonly sessions: LRUCache<string, Held<SessionGrant>>;
  private readonly unknown: LRUCache<string, Held<true>>;
  private readonly members: LRUCache<number, Held<Memberships>>;
  private readonly users: LRUCache<number, Held<UserRow>>;
  /** By `${userId}:${orgId}`. */
  private readonly writes: LRUCache<string, Held<OrgWrite & { userId: number }>>;
  /** Bumped by every notice: a read begun before it is not kept. */
  private generation = 0;
  /** The bus's epoch the entries were read under. */
  private epoch: number | undefined = 0;

  constructor(private readonly options: CredentialCacheOptions) {
    const max = Math.max(1, options.maxEntries);
    this.keys = new LRUCache({ max });
    this.sessions = new LRUCache({ max });
    this.members = new LRUCache({ max });
    this.users = new LRUCache({ max });
    this.writes = new LRUCache({ max });
    this.unknown = new LRUCache({ max: Math.max(1, Math.ceil(max / 10)) });
  }

  /** The grant of an API key, by the hash of its secret; `load` reads it when it is not held. */
  key(hash: string, load: () => Promise<KeyGrant | undefined>): Promise<KeyGrant | undefined> {
    return this.through(this.keys, hash, `k:${hash}`, load, () => Infinity);
  }

  /** The grant of a live session; `load` reads it (unexpired only) when it is not held. */
  session(hash: string, load: () => Promise<SessionGrant | undefined>): Promise<SessionGrant | undefined> {
    return this.through(this.sessions, hash, `s:${hash}`, load, (v) => v.expiresAt);
  }

  /** The grant of an API key when memory holds it (no promise: the request hook's fast path); else undefined. */
  heldKey(hash: string): KeyGrant | undefined {
    return this.peek(this.keys, hash);
  }

  /** The grant of a session when memory holds it; else undefined. */
  heldSession(hash: string): SessionGrant | undefined {
    return this.peek(this.sessions, hash);
  }

  /** The row of a user when memory holds it (no promise); else undefined. */
  heldUser(userId: number): UserRow | undefined {
    return this.peek(this.users, userId);
  }

  /** The memberships of a user; `load` reads them when they are not held. */
  async memberships(userId: number, load: () => Promise<Memberships>): Promise<Memberships> {
    const held = await this.through(this.members, userId, undefined, load, () => Infinity);
    return held ?? { orgIds: [], primaryOrgId: undefined }; // never undefined: `load` always answers
  }

  /**
   * The row of a user (their name, plan, address and its proof...); `load` reads it when it is not
   * held. Not for decisions of access: the row's writers publish `{userRow}` after they commit.
   */
  user(userId: number, load: () => Promise<UserRow | undefined>): Promise<UserRow | undefined> {
    return this.through(this.users, userId, undefined, load, () => Infinity);
  }

  /** A member's write access to an org (undefined: not a member); `load` reads it when it is not held. */
  async orgWrite(userId: number, orgId: number, load: () => Promise<OrgWrite | undefined>): Promise<OrgWrite | undefined> {
    return this.through(this.writes, `${userId}:${orgId}`, undefined, async () => {
      const w = await load();
      return w && { ...w, userId };
    }, () => Infinity);
  }

  /** Drops what the notice covers (see the class comment). */
  notice(n: AccessNotice): void {
    this.generation += 1;
    if (n.userRow !== undefined) {
      this.users.delete(n.userRow);
      dropWhere(this.writes, (w) => w.ownerId === n.userRow);
    } else if (n.keyId !== undefined) {
      dropWhere(this.keys, (g) => g.keyId === n.keyId);
    } else if (n.sessionId !== undefined) {
      this.sessions.delete(n.sessionId);
    } else if (n.userId !== undefined) {
      this.members.delete(n.userId);
      if (n.orgId === undefined) {
        dropWhere(this.keys, (g) => g.userId === n.userId);
        dropWhere(this.sessions, (g) => g.userId === n.userId);
        this.users.delete(n.userId);
        dropWhere(this.writes, (w) => w.userId === n.userId || w.ownerId === n.userId);
      } else {
        this.writes.delete(`${n.userId}:${n.orgId}`);
      }
    } else if (n.orgId !== undefined) {
      dropWhere(this.members, (m) => m.orgIds.includes(n.orgId!));
      this.writes.clear();
    }
  }

  /** Entries held, per part (tests check the bounds). */
  sizes(): { keys: number; sessions: number; memberships: number; unknown: number } {
    return { keys: this.keys.size, sessions: this.sessions.size, memberships: this.members.size, unknown: this.unknown.size };
  }

  /** User rows and org write accesses held (tests). */
  rowSizes(): { users: number; orgWrites: number } {
    return { users: this.users.size, orgWrites: this.writes.size };
  }

  clear(): void {
    this.keys.clear();
    this.sessions.clear();
    this.members.clear();
    this.unknown.clear();
    this.users.clear();
    this.writes.clear();
  }

  /** The bus's epoch now, or undefined when memory must not serve (cache off, or notices may be missed). */
  private usableEpoch(): number | undefined {
    if (this.options.ttlMs <= 0) return undefined;
    const epoch = this.options.accessEpoch ? this.options.accessEpoch() : 0;
    if (epoch !== this.epoch) {
      // Notices may have been missed since the entries were read: none of them may serve.
      this.clear();
      this.epoch = epoch;
    }
    return epoch;
  }

  private peek<K extends string | number, V>(lru: LRUCache<K, Held<V>>, id: K): V | undefined {
    if (this.usableEpoch() === undefined) return undefined;
    const held = lru.get(id);
    if (!held) return undefined;
    const now = this.options.now();
    return now >= held.from && now < held.until ? held.value : undefined;
  }

  private async through<K extends string | number, V extends object>(
    lru: LRUCache<K, Held<V>>,
    id: K,
    unknownId: string | undefined,
    load: () => Promise<V | undefined>,
    endOf: (value: V) => number,
  ): Promise<V | undefined> {
    const epoch = this.usableEpoch();
    if (epoch === undefined) return load();
    const now = this.options.now();
    const held = lru.get(id);
    if (held) {
      if (now >= held.from && now < held.until) return held.value;
      lru.delete(id);
    }
    if (unknownId !== undefined) {
      const miss = this.unknown.get(unknownId);
      if (miss && now >= miss.from && now < miss.until) return undefined;
    }
    const generation = this.generation;
    const value = await load();
    if (generation !== this.generation || this.usableEpoch() !== epoch) return value;
    const after = this.options.now();
    if (value !== undefined) {
      lru.set(id, { value, from: after, until: Math.min(after + this.options.ttlMs, endOf(value)) });
    } else if (unknownId !== undefined) {
      this.unknown.set(unknownId, { value: true, from: after, until: after + Math.min(this.options.ttlMs, UNKNOWN_MAX_MS) });
    }
    return value;
  }
}

function dropWhere<K extends string | number, V>(lru: LRUCache<K, Held<V>>, covered: (value: V) => boolean): void {
  const gone: K[] = [];
  lru.forEach((held, id) => {
    if (covered(held.value)) gone.push(id);
  });
  for (const id of gone) lru.delete(id);
}

const caches = new WeakMap<EventBus, CredentialCache>();

/**
 * The credential cache of a context, made on first use and fed by its bus's access notices (one
 * per bus, so every context sharing a bus shares its cache and its notices).
 */
export function credentialCache(ctx: AppContext): CredentialCache {
  const bus = ctx.events.bus;
  let cache = caches.get(bus);
  if (!cache) {
    const made = new CredentialCache({
      ttlMs: ctx.config.credentialCache.ttlMs,
      maxEntries: ctx.config.credentialCache.maxEntries,
      now: () => ctx.clock.nowMs(),
      accessEpoch: bus.accessEpoch?.bind(bus),
    });
    bus.subscribeAccess((notice) => made.notice(notice));
    caches.set(bus, made);
    cache = made;
  }
  return cache;
}
