// One organization: members (roles, removal, invites), teams (routing, team members), dispatch settings
// with the default escalation policy, the link to its escalation policies, and (admins and owners)
// its incident subscriptions.
import { useState } from 'preact/hooks';
import { ApiError, del, get, patch, post } from '../../lib/api';
import { formatDateTime } from '../../lib/format';
import { useSession } from '../session';
import type { CreatedTeam, Member, Role, Team, TeamMember } from '../types';
import { Empty, ErrorAlert, FieldError, Loading, useAsync } from '../ui';
import { DispatchSettingsCard } from './org-dispatch';
import { SubscriptionsCard } from './org-subscriptions';

export function OrgDetailView({ slug }: { slug: string }) {
  const { orgs, me } = useSession();
  const org = orgs.find((o) => o.slug === slug);
  const base = `/v1/orgs/${encodeURIComponent(slug)}`;
  const members = useAsync(() => get<{ members: Member[]; invites: { email: string; role: Role; created_at: string }[] }>(`${base}/members`), [slug]);
  const teams = useAsync(() => get<{ teams: Team[] }>(`${base}/teams`).then((r) => r.teams), [slug]);
  const [actionError, setActionError] = useState<unknown>(null);
  if (!org) return <Empty title="Organization not found"><a href="/app/orgs">Back to organizations</a></Empty>;
  const manage = org.role === 'owner' || org.role === 'admin';

  const act = async (f: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await f();
      members.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  return (
    <section class="view">
      <a class="back" href="/app/orgs">
        ← Organizations
      </a>
      <header class="page-header">
        <div>
          <h1>{org.name}</h1>
          <div class="row badges">
            <span class="badge brand">You are {org.role}</span>
            {org.locked ? <span class="badge danger">Locked: over the plan's limit, read-only</span> : null}
          </div>
        </div>
        <div class="page-actions">
          <a class="button secondary" href={`/app/orgs/${encodeURIComponent(slug)}/escalation-policies`} data-testid="org-policies-link">
            Escalation policies
          </a>
        </div>
      </header>
      <div class="detail-grid even">
        <div class="card stack">
          <h2>Members</h2>
          <ErrorAlert error={members.error ?? actionError} />
          {members.loading && !members.data ? <Loading label="Loading members" /> : null}
          <ul class="people" data-testid="member-list">
            {members.data?.members.map((m) => (
              <li key={m.user_id} class="person">
                <div class="person-main">
                  <strong>
                    {m.name}
                    {m.user_id === me.id ? ' (you)' : ''}
                  </strong>
                  <small class="muted">{m.email}</small>
                </div>
                {manage && m.user_id !== me.id ? (
                  <div class="row tight">
                    <label class="visually-hidden" for={`role-${m.user_id}`}>
                      Role of {m.name}
                    </label>
                    <select id={`role-${m.user_id}`} class="compact" value={m.role} onChange={(e) => void act(() => patch(`${base}/members/${m.user_id}`, { role: e.currentTarget.value }))}>
                      <option value="member">member</option>
                      <option value="admin">admin</option>
                      {org.role === 'owner' ? <option value="owner">owner</option> : null}
                    </select>
                    <button
                      type="button"
                      class="ghost small danger-text"
                      aria-label={`Remove ${m.name}`}
                      onClick={() => confirm(`Remove ${m.name} from ${org.name}?`) && void act(() => del(`${base}/members/${m.user_id}`))}
                    >
                      Remove
                    </button>
                  </div>
                ) : (
                  <span class="badge">{m.role}</span>
                )}
              </li>
            ))}
            {members.data?.invites.map((i) => (
              <li key={i.email} class="person invite">
                <div class="person-main">
                  <strong>{i.email}</strong>
                  <small class="muted">Invited {formatDateTime(i.created_at)}</small>
                </div>
                <span class="badge warn">invited · {i.role}</span>
              </li>
            ))}
          </ul>
          {manage && !org.personal ? <AddMember base={base} onAdded={members.reload} /> : null}
          {org.personal ? <p class="muted">This is your personal organization. Create another one to work with others.</p> : null}
        </div>
        <div class="card stack">
          <h2>Teams</h2>
          <ErrorAlert error={teams.error} />
          {teams.loading && !teams.data ? <Loading label="Loading teams" /> : null}
          {teams.data && teams.data.length === 0 ? <p class="muted">No teams yet. Teams share event types and route bookings between their members.</p> : null}
          {teams.data?.map((t) => <TeamCard key={t.id} base={base} org={org} team={t} members={members.data?.members ?? []} manage={manage} />)}
          {manage ? <CreateTeam base={base} onCreated={teams.reload} /> : null}
        </div>
        <DispatchSettingsCard base={base} slug={slug} manage={manage && !org.locked} />
        {manage ? <SubscriptionsCard base={base} manage={!org.locked} /> : null}
      </div>
    </section>
  );
}

function AddMember({ base, onAdded }: { base: string; onAdded: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setNotice('');
    try {
      const r = await post<{ invited?: boolean; email: string }>(`${base}/members`, { email, role });
      setNotice(r.invited ? `${r.email} has no account yet: we emailed them an invite.` : `${r.email} was added.`);
      setEmail('');
      onAdded();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="stack inline-form" onSubmit={(e) => void submit(e)}>
      <h3>Add or invite someone</h3>
      {notice ? <div class="alert success">{notice}</div> : null}
      <ErrorAlert error={error} />
      <div class="row nowrap-lg">
        <div class="field grow">
          <label for="member-email">Email</label>
          <input id="member-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          <FieldError error={error} name="email" />
        </div>
        <div class="field">
          <label for="member-role">Role</label>
          <select id="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            <option value="member">Member</option>
            <option value="admin">Admin</option>
            <option value="owner">Owner</option>
          </select>
        </div>
        <button type="submit" class="align-end">Add</button>
      </div>
    </form>
  );
}

function TeamCard({ base, org, team, members, manage }: { base: string; org: { slug: string }; team: Team; members: Member[]; manage: boolean }) {
  const path = `${base}/teams/${encodeURIComponent(team.slug)}/members`;
  const [open, setOpen] = useState(false);
  const list = useAsync(() => (open ? get<{ members: TeamMember[] }>(path).then((r) => r.members) : Promise.resolve(undefined)), [open]);
  const [pick, setPick] = useState('');
  const [error, setError] = useState<unknown>(null);
  const act = async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const candidates = members.filter((m) => !list.data?.some((t) => t.user_id === m.user_id));
  return (
    <div class="team">
      <button type="button" class="team-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span>
          <strong>{team.name}</strong> <small class="muted mono">{team.slug}</small>
        </span>
        <span class="row tight">
          <span class="badge">{team.routing === 'round_robin' ? 'Round robin' : 'Random'}</span>
          {team.locked ? <span class="badge danger">Locked</span> : null}
          <span aria-hidden="true">{open ? '▴' : '▾'}</span>
        </span>
      </button>
      {open ? (
        <div class="stack team-body">
          <ErrorAlert error={list.error ?? error} />
          {list.loading && !list.data ? <Loading /> : null}
          {list.data && list.data.length === 0 ? <p class="muted">No members in this team.</p> : null}
          <ul class="people">
            {list.data?.map((m) => (
              <li key={m.user_id} class="person">
                <strong>{m.name}</strong>
                <div class="row tight">
                  {m.locked ? <span class="badge danger">Over limit</span> : null}
                  <label class="check small-check">
                    <input type="checkbox" checked={m.active} disabled={!manage} onChange={(e) => void act(() => patch(`${path}/${m.user_id}`, { active: e.currentTarget.checked }))} />
                    In rotation
                  </label>
                  {manage ? (
                    <button type="button" class="ghost small danger-text" onClick={() => void act(() => del(`${path}/${m.user_id}`))}>
                      Remove
                    </button>
                  ) : null}
                </div>
              </li>
            ))}
          </ul>
          {manage ? (
            <p class="small-print">
              <a href={`/app/event-types/new?team=${encodeURIComponent(org.slug)}/${encodeURIComponent(team.slug)}`} data-testid="new-team-event-type">
                New event type for {team.name}
              </a>{' '}
              <span class="muted">(booked through the team's link, routed {team.routing === 'round_robin' ? 'round robin' : 'at random'})</span>
            </p>
          ) : null}
          {manage && candidates.length > 0 ? (
            <div class="row">
              <label class="visually-hidden" for={`add-${team.id}`}>
                Add a member to {team.name}
              </label>
              <select id={`add-${team.id}`} class="compact grow" value={pick} onChange={(e) => setPick(e.currentTarget.value)}>
                <option value="">Add a member…</option>
                {candidates.map((m) => (
                  <option key={m.user_id} value={String(m.user_id)}>
                    {m.name}
                  </option>
                ))}
              </select>
              <button type="button" class="secondary small" disabled={!pick} onClick={() => void act(() => post(path, { user_id: Number(pick) })).then(() => setPick(''))}>
                Add
              </button>
            </div>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function CreateTeam({ base, onCreated }: { base: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [routing, setRouting] = useState('round_robin');
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { me } = useSession();
  const upgrade = error instanceof ApiError && error.status === 403 && error.body.code === 'upgrade_required';
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setNotice(null);
    try {
      const team = await post<CreatedTeam>(`${base}/teams`, { name, routing });
      // The creator joins their new team (as in Cal.com); the answer says so.
      setNotice(team.members.some((m) => m.user_id === me.id) ? `Team “${team.name}” created. You are a member, in its rotation.` : `Team “${team.name}” created.`);
      setName('');
      onCreated();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="stack inline-form" onSubmit={(e) => void submit(e)}>
      <h3>New team</h3>
      {notice ? (
        <p class="saved-note" role="status" data-testid="team-created">
          {notice}
        </p>
      ) : null}
      {upgrade ? (
        <div class="alert info" role="alert">
          <strong>Upgrade required.</strong> Your plan does not allow more teams here: Agency allows 5 teams per organization, Enterprise any number.
          {me.admin ? (
            <>
              {' '}
              <a href="/app/admin">Change plans on the administration page</a>.
            </>
          ) : null}
        </div>
      ) : (
        <ErrorAlert error={error} />
      )}
      <div class="row nowrap-lg">
        <div class="field grow">
          <label for="team-name">Name</label>
          <input id="team-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <FieldError error={error} name="name" />
        </div>
        <div class="field">
          <label for="team-routing">Routing</label>
          <select id="team-routing" value={routing} onChange={(e) => setRouting(e.currentTarget.value)}>
            <option value="round_robin">Round robin</option>
            <option value="random">Random</option>
          </select>
        </div>
        <button type="submit" class="align-end">Create</button>
      </div>
    </form>
  );
}
