// Whom a level of an escalation policy reaches, resolved at the moment it fires (issue #36).
// Each target type has one resolver (RESOLVERS) and its entry in the policy schema; `nearest` (issue
// #38) ranks the live beacons by distance to the incident as the dispatch module's responder search does.
import type { AppContext } from '../../context.js';
import { iso } from '../../lib/clock.js';
import { rankDevices } from '../dispatch/index.js';
import type { PolicyTarget } from '../incidents/index.js';
import { liveScheduleIds, whoIsOnCall } from '../oncall/index.js';
import { listMembers, listTeamMembers, listTeams } from '../orgs/index.js';

export interface PagedPerson {
  userId: number;
  /** The target that reached them (the first one, when several did). */
  target: PolicyTarget;
  /** Reached by a `nearest` target: how far their nearest live device was (metres, rounded). */
  distanceM?: number;
}

/** The incident a level fires for: its org, mode and position (for a `nearest` target). */
export interface LevelIncident {
  org_id: number;
  livemode: 0 | 1;
  lat: number | null;
  lng: number | null;
}

/** What the resolvers of one level share: the org's members and its live schedules, read once. */
interface Lookup {
  ctx: AppContext;
  orgId: number;
  incident: LevelIncident;
  at: number;
  members: Set<number>;
  schedules?: Set<number>;
}

type Resolved = { people: number[]; distances?: Map<number, number>; reason?: string };
type Resolver<T> = (l: Lookup, target: T) => Promise<Resolved>;
type Of<K extends PolicyTarget['type']> = K extends 'nearest' ? Extract<PolicyTarget, { type: 'nearest' }> : { type: K; id: number };

async function teamPeople(l: Lookup, id: number): Promise<Resolved & { name?: string }> {
  const team = (await listTeams(l.ctx.db, l.orgId)).find((t) => t.id === id);
  if (!team) return { people: [], reason: `team ${id} no longer exists` };
  const people = (await listTeamMembers(l.ctx.db, id)).filter((m) => m.active === 1 && l.members.has(m.user_id)).map((m) => m.user_id);
  return people.length > 0 ? { people, name: team.name } : { people, name: team.name, reason: `team "${team.name}" has no active members` };
}

async function onCall(l: Lookup, id: number): Promise<Resolved> {
  l.schedules ??= await liveScheduleIds(l.ctx, l.orgId);
  if (!l.schedules.has(id)) return { people: [], reason: `schedule ${id} no longer exists` };
  const shift = await whoIsOnCall(l.ctx, l.orgId, id, l.at);
  if (!shift) return { people: [], reason: `nobody is on call in schedule ${id}` };
  if (!l.members.has(shift.userId)) return { people: [], reason: `the person on call in schedule ${id} is no longer a member` };
  return { people: [shift.userId] };
}

/**
 * The `count` members nearest to the incident by their live beacons (each at their nearest device),
 * within `within_m` when given, among those on call in `schedule_id` or active in `team_id` when
 * given; positions as they are when the level fires.
 */
async function nearest(l: Lookup, t: Of<'nearest'>): Promise<Resolved> {
  const { lat, lng } = l.incident;
  if (lat === null || lng === null) return { people: [], reason: 'the incident has no position for the nearest responders' };
  let allowed: Set<number> = l.members;
  if (t.schedule_id !== undefined || t.team_id !== undefined) {
    const r = t.schedule_id !== undefined ? await onCall(l, t.schedule_id) : await teamPeople(l, t.team_id!);
    if (r.people.length === 0) return r;
    allowed = new Set(r.people);
  }
  const mode = l.incident.livemode === 1 ? 'live' : 'test';
  const seenSince = iso(new Date(l.ctx.clock.nowMs() - l.ctx.config.beaconTimeoutMs));
  const devices = (await l.ctx.beacons.positions(l.ctx.db, l.orgId, mode, seenSince)).filter((d) => allowed.has(d.user_id));
  const ranked = rankDevices(devices, { lat, lng }).filter((c) => t.within_m === undefined || c.distance_m! <= t.within_m).slice(0, t.count);
  if (ranked.length === 0) {
    const among = t.schedule_id !== undefined ? ` on call in schedule ${t.schedule_id}` : t.team_id !== undefined ? ` of team ${t.team_id}` : '';
    return { people: [], reason: `nobody${among} with a live beacon ${t.within_m !== undefined ? `within ${t.within_m} m of the incident` : 'to page by position'}` };
  }
  return { people: ranked.map((c) => c.device.user_id), distances: new Map(ranked.map((c) => [c.device.user_id, Math.round(c.distance_m!)])) };
}

const RESOLVERS: { [K in PolicyTarget['type']]: Resolver<Of<K>> } = {
  user: async (l, t) => (l.members.has(t.id) ? { people: [t.id] } : { people: [], reason: `user ${t.id} is no longer a member` }),
  team: async (l, t) => teamPeople(l, t.id),
  schedule: async (l, t) => onCall(l, t.id),
  nearest,
};

/**
 * The people a level's targets reach at instant `at` (ms), each once (the first target that reached
 * them is theirs), in the targets' order; with nobody, why (one reason per target, joined).
 */
export async function resolveLevel(ctx: AppContext, incident: LevelIncident, targets: readonly PolicyTarget[], at: number): Promise<{ people: PagedPerson[]; reason: string }> {
  const orgId = incident.org_id;
  const l: Lookup = { ctx, orgId, incident, at, members: new Set((await listMembers(ctx.db, orgId)).map((m) => m.user_id)) };
  const people = new Map<number, PagedPerson>();
  const reasons: string[] = [];
  for (const target of targets) {
    const r = await (RESOLVERS[target.type] as Resolver<PolicyTarget>)(l, target);
    for (const userId of r.people) {
      if (people.has(userId)) continue;
      const d = r.distances?.get(userId);
      people.set(userId, d === undefined ? { userId, target } : { userId, target, distanceM: d });
    }
    if (r.reason) reasons.push(r.reason);
  }
  return { people: [...people.values()], reason: reasons.join('; ') || 'the level has no targets' };
}
