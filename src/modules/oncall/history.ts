// Rows -> the resolver's History: every version of the layers, the overrides as they were in
// force (from their start, which is never before their creation, until their end or deletion),
// and when each user was a member of the org. Loaded for many schedules in a fixed number of
// queries (one per table), whatever their count.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { membershipSpans } from '../orgs/index.js';
import type { History, Interval, Version } from './resolver.js';
import { overridesOf, versionsOf, type ScheduleRow, type VersionRow } from './schedules.repository.js';

const FOREVER = 8.64e15;

function versionsFor(s: ScheduleRow, rows: readonly VersionRow[]): Version[] {
  const out: Version[] = rows.map((v) => ({ from: Date.parse(v.effective_from), timeZone: v.time_zone, layers: v.layers }));
  if (s.deleted_at) out.push({ from: Date.parse(s.deleted_at), timeZone: s.time_zone, layers: [], ended: true });
  return out;
}

/** An org's members over time (user -> sorted [joined, left) spans), and `key`: the same as text, equal exactly when the spans are. */
export interface OrgMembers {
  spans: Map<number, Interval[]>;
  key: string;
}

/** The members over time of each of these orgs (two queries, whatever their number). */
export async function membersOf(db: Kysely<DB>, orgIds: readonly number[]): Promise<Map<number, OrgMembers>> {
  const spans = new Map<number, Map<number, Interval[]>>();
  const keys = new Map<number, string[]>();
  for (const m of await membershipSpans(db, orgIds)) {
    let org = spans.get(m.org_id);
    if (!org) spans.set(m.org_id, (org = new Map<number, Interval[]>()));
    let list = org.get(m.user_id);
    if (!list) org.set(m.user_id, (list = []));
    list.push({ start: Date.parse(m.joined_at), end: m.left_at === null ? FOREVER : Date.parse(m.left_at) });
    let key = keys.get(m.org_id);
    if (!key) keys.set(m.org_id, (key = []));
    key.push(`${m.user_id}@${m.joined_at}/${m.left_at ?? ''}`);
  }
  const out = new Map<number, OrgMembers>();
  // Sorted: rows of equal join times come in no set order.
  for (const [orgId, org] of spans) out.set(orgId, { spans: org, key: keys.get(orgId)!.sort().join(',') });
  return out;
}

/**
 * The history of each schedule, with the overrides that count somewhere in [from, to). `known`: the
 * members of their orgs when the caller has read them already (membersOf).
 */
export async function loadHistories(db: Kysely<DB>, schedules: readonly ScheduleRow[], from: number, to: number, known?: Map<number, OrgMembers>): Promise<Map<number, History>> {
  const ids = schedules.map((s) => s.id);
  const [versions, overrides, members] = await Promise.all([
    versionsOf(db, ids),
    overridesOf(db, ids, new Date(from).toISOString(), new Date(to).toISOString()),
    known ?? membersOf(db, [...new Set(schedules.map((s) => s.org_id))]),
  ]);
  const versionsBy = groupBy(versions, (v) => v.schedule_id);
  const overridesBy = groupBy(overrides, (o) => o.schedule_id);
  const out = new Map<number, History>();
  for (const s of schedules) {
    out.set(s.id, {
      versions: versionsFor(s, versionsBy.get(s.id) ?? []),
      overrides: (overridesBy.get(s.id) ?? []).map((o) => ({
        id: o.id,
        userId: o.user_id,
        start: Date.parse(o.start_time),
        end: o.deleted_at && o.deleted_at < o.end_time ? Date.parse(o.deleted_at) : Date.parse(o.end_time),
        order: o.id,
      })),
      membership: members.get(s.org_id)?.spans ?? new Map<number, Interval[]>(),
    });
  }
  return out;
}

function groupBy<T>(rows: readonly T[], key: (r: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}
