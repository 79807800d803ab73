// Whose event type it is: the person's own, or a team's (booked through the team's link, a member
// chosen by the team's routing). New ones choose here; a team's shows its team and routing.
import { get } from '../../lib/api';
import { useSession } from '../session';
import type { Org, Team } from '../types';
import { useAsync } from '../ui';

export interface TeamChoice {
  org: Org;
  team: Team;
}

export const ROUTING_LABEL: Record<string, string> = {
  round_robin: 'round robin: the available member whose last booking is oldest',
  random: 'random: any available member',
};

/** The teams of the caller's orgs (one request per shared org); `admin` keeps the orgs they administer. */
export function useTeams(admin: boolean) {
  const { orgs } = useSession();
  const wanted = orgs.filter((o) => !o.personal && (!admin || o.role !== 'member'));
  return useAsync(
    () => Promise.all(wanted.map((org) => get<{ teams: Team[] }>(`/v1/orgs/${encodeURIComponent(org.slug)}/teams`).then((r) => r.teams.map((team) => ({ org, team }))))).then((l) => l.flat()),
    [wanted.map((o) => o.id).join(',')],
  );
}

/** The "Who is booked" choice of a new event type: value '' is personal, else `<org slug>/<team slug>`. */
export function OwnerPicker({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const teams = useTeams(true);
  const chosen = teams.data?.find((t) => `${t.org.slug}/${t.team.slug}` === value);
  if (!teams.data || teams.data.length === 0) return null;
  return (
    <div class="field">
      <label for="et-owner">Who is booked</label>
      <select id="et-owner" data-testid="et-owner" value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">Me (a personal event type)</option>
        {teams.data.map(({ org, team }) => (
          <option key={team.id} value={`${org.slug}/${team.slug}`} disabled={team.locked}>
            Team {team.name} ({org.name})
          </option>
        ))}
      </select>
      <small data-testid="et-owner-routing">
        {chosen
          ? `A member of ${chosen.team.name} is booked, chosen by ${ROUTING_LABEL[chosen.team.routing] ?? chosen.team.routing}. Change the routing and the members on the organization's page.`
          : 'Team event types are booked through the team’s link; the team’s routing picks the member.'}
      </small>
    </div>
  );
}

/** What an existing team event type says about its team. */
export function TeamInfo({ orgId, teamId }: { orgId: number; teamId: number }) {
  const teams = useTeams(false);
  const found = teams.data?.find((t) => t.team.id === teamId && t.org.id === orgId);
  if (!found) return null;
  return (
    <p class="alert info" data-testid="et-team-info">
      Team event type of <strong>{found.team.name}</strong> ({found.org.name}): routing {ROUTING_LABEL[found.team.routing] ?? found.team.routing}.{' '}
      <a href={`/app/orgs/${encodeURIComponent(found.org.slug)}`}>Members and routing</a>
    </p>
  );
}
