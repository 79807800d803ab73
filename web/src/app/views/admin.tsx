// The instance admin's page (/app/admin): every user with their plan and whether their address is
// proven; the plan is changed, and an address vouched for, with PATCH /v1/users/:id. Reached from
// the menu (admins only) and from an "Upgrade required" message.
import { useState } from 'preact/hooks';
import { get, patch } from '../../lib/api';
import { formatDateTime } from '../../lib/format';
import { PlanOptions, planLabel } from '../plans';
import { useSession } from '../session';
import { Empty, ErrorAlert, Loading, PageHeader, Pager, useAsync } from '../ui';

interface AdminUser {
  id: number;
  email: string;
  name: string;
  plan: string;
  admin: boolean;
  email_verified: boolean;
  created_at: string;
}

const LIMIT = 50;

function UserRow({ user, onSaved }: { user: AdminUser; onSaved: (u: AdminUser) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  const save = async (body: { plan?: string; email_verified?: boolean }, what: string) => {
    setBusy(true);
    setError(null);
    setSaved('');
    try {
      onSaved(await patch<AdminUser>(`/v1/users/${user.id}`, body));
      setSaved(what);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="card admin-user" data-testid="admin-user" data-email={user.email}>
      <div class="admin-user-who">
        <strong>{user.name}</strong>
        <span class="mono small-print">{user.email}</span>
        <span class="badges row">
          {user.admin ? <span class="badge brand">Admin</span> : null}
          {user.email_verified ? (
            <span class="badge ok" data-testid="admin-verified">
              Address proven
            </span>
          ) : (
            <span class="badge warn" data-testid="admin-unverified">
              Address not proven
            </span>
          )}
          <span class="muted small-print">Since {formatDateTime(user.created_at)}</span>
        </span>
      </div>
      <div class="admin-user-actions">
        <div class="field">
          <label for={`plan-${user.id}`}>Plan</label>
          <select id={`plan-${user.id}`} data-testid="admin-plan" value={user.plan} disabled={busy} onChange={(e) => void save({ plan: e.currentTarget.value }, `Plan changed to ${e.currentTarget.value}.`)}>
            <PlanOptions />
          </select>
        </div>
        {user.email_verified ? (
          <button type="button" class="secondary small" disabled={busy} onClick={() => void save({ email_verified: false }, 'The address is marked unproven.')}>
            Mark address unproven
          </button>
        ) : (
          <button type="button" class="secondary small" data-testid="admin-verify" disabled={busy} onClick={() => void save({ email_verified: true }, 'The address is marked proven.')}>
            Mark address proven
          </button>
        )}
      </div>
      <ErrorAlert error={error} />
      {saved ? (
        <p class="alert success small-print" role="status" data-testid="admin-saved">
          {saved}
        </p>
      ) : null}
    </li>
  );
}

/** The plan new registrations get (GET/PATCH /v1/admin/settings; docs/configuration.md). */
function DefaultPlan() {
  const settings = useAsync(() => get<{ default_plan: string }>('/v1/admin/settings'), []);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  const save = async (plan: string) => {
    setError(null);
    setSaved('');
    try {
      const r = await patch<{ default_plan: string }>('/v1/admin/settings', { default_plan: plan });
      settings.setData(() => r);
      setSaved(`New accounts now start on ${planLabel(r.default_plan)}.`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card stack" data-testid="default-plan">
      <h2>New registrations</h2>
      <p class="muted">The plan every new account starts on. Existing accounts keep theirs; change them below.</p>
      <ErrorAlert error={settings.error ?? error} />
      {settings.data ? (
        <div class="field narrow">
          <label for="default-plan">Default plan</label>
          <select id="default-plan" name="default_plan" data-testid="default-plan-select" value={settings.data.default_plan} onChange={(e) => void save(e.currentTarget.value)}>
            <PlanOptions />
          </select>
        </div>
      ) : null}
      {saved ? (
        <p class="saved-note" role="status" data-testid="default-plan-saved">
          {saved}
        </p>
      ) : null}
    </div>
  );
}

export function AdminView({ page }: { page: number }) {
  const { me } = useSession();
  const [p, setP] = useState(page);
  const users = useAsync(() => get<{ users: AdminUser[]; total: number }>(`/v1/users?limit=${LIMIT}&page=${p}`), [p]);
  if (!me.admin) {
    return (
      <section class="view">
        <PageHeader title="Administration" />
        <Empty title="For instance administrators">Only an administrator of this Muster instance can change plans. Ask yours.</Empty>
      </section>
    );
  }
  return (
    <section class="view" data-testid="admin-view">
      <PageHeader
        title="Administration"
        sub="Every account on this Muster instance. Change a plan here; vouch for an address when its owner cannot receive the confirmation email (that also accepts their waiting invites)."
      />
      <DefaultPlan />
      {users.loading && !users.data ? <Loading label="Loading users" /> : null}
      <ErrorAlert error={users.error} />
      {users.data ? (
        <>
          <p class="muted">{users.data.total === 1 ? '1 account' : `${users.data.total} accounts`}</p>
          <ul class="cards admin-users">
            {users.data.users.map((u) => (
              <UserRow key={u.id} user={u} onSaved={(nu) => users.setData((d) => d && { ...d, users: d.users.map((x) => (x.id === nu.id ? nu : x)) })} />
            ))}
          </ul>
          <Pager page={p} pages={Math.max(1, Math.ceil(users.data.total / LIMIT))} onPage={setP} />
        </>
      ) : null}
    </section>
  );
}
