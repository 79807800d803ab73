// Who is on call now and next, per schedule, kept between questions (issue #40). The org view
// (GET /v1/orgs/:org_slug/on-call) asks it of every schedule of the org on every request, and
// paging of each schedule an escalation level targets; resolving each schedule anew (its layer
// versions, the overrides of 93 days either side, then the resolver) was most of their CPU, for an
// answer that stays the same until the next handoff.
//
// An entry holds the answer for instants in [from, until): from the current shift's start (or the
// instant asked, in a gap) to its end (or the next shift's start, in a gap). The resolver is a pure
// function of the history, so every instant of that span gets the same answer while the history
// stays as it was; a handoff, an override starting or ending, a layer version taking effect are
// shift bounds, so no time-driven change is inside a span. What could change the history is checked
// on every hit, with nothing shared between instances but the database:
// - the schedule's `version` (migration 0051), moved in the transaction of every write of its row,
//   its layers and its overrides, and read by the caller (with the schedule row it reads anyway)
//   before it resolves: an entry is kept under the version read before its history, so a write
//   committing in between can make an entry look old, never serve an old answer. A write on any
//   instance is seen on this one at its next read.
// - the org's members over time (`OrgMembers.key`), read by the caller on every question (a member
//   who leaves is off every layer from then): an entry is served only with the members it was built with.
// - the schedule's org and creation time, so that an id reused (SQLite, after a deleted org) or another
//   database's schedule of the same id never matches. Entries are per context (one database): the
//   context builds its memo (`ctx.oncallMemo`, src/context.ts).
// Answers whose shifts reach past the 93 days either side that are resolved are not kept.
import { LRUCache } from 'lru-cache';
import type { Around } from './queries.js';
import type { ScheduleRow } from './schedules.repository.js';

interface Entry {
  version: number;
  orgId: number;
  createdAt: string;
  members: string;
  from: number;
  until: number;
  around: Around;
}

/** At most `max` schedules (ONCALL_MEMO_SIZE), the least recently asked going first. */
export class AroundMemo {
  private readonly held: LRUCache<number, Entry>;

  constructor(max: number) {
    this.held = new LRUCache<number, Entry>({ max });
  }

  /** The answer kept for schedule `s` at instant `at`, if it still holds with the org's members `members`. */
  get(s: ScheduleRow, members: string, at: number): Around | undefined {
    const e = this.held.get(s.id);
    if (!e || e.version !== s.version || e.orgId !== s.org_id || e.createdAt !== s.created_at || e.members !== members) return undefined;
    return at >= e.from && at < e.until ? e.around : undefined;
  }

  /** Keeps `around`, resolved at `at` from a history read after `s` and with `members`; its shifts must be whole (not cut by the resolved range). */
  keep(s: ScheduleRow, members: string, at: number, around: Around): void {
    const { current, next } = around;
    const until = current ? current.end : next?.start;
    if (until === undefined) return;
    this.held.set(s.id, { version: s.version, orgId: s.org_id, createdAt: s.created_at, members, from: current ? current.start : at, until, around });
  }

  get size(): number {
    return this.held.size;
  }
}
