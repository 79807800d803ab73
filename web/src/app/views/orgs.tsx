// Organizations you belong to, and a new one (agency and enterprise plans).
import { useState } from 'preact/hooks';
import { ApiError, post } from '../../lib/api';
import { useSession } from '../session';
import type { Org } from '../types';
import { ErrorAlert, FieldError, PageHeader } from '../ui';

export function OrgsView() {
  const { orgs, reloadOrgs } = useSession();
  const [creating, setCreating] = useState(false);
  return (
    <section class="view">
      <PageHeader title="Organizations" sub="Everything you share with others belongs to an organization.">
        <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating} data-testid="new-org">
          {creating ? 'Close' : 'New organization'}
        </button>
      </PageHeader>
      {creating ? <CreateOrg onCreated={() => void reloadOrgs().then(() => setCreating(false))} /> : null}
      <ul class="cards" data-testid="org-list">
        {orgs.map((o) => (
          <li key={o.id} class="card">
            <a class="org-card" href={`/app/orgs/${encodeURIComponent(o.slug)}`} data-testid="org-row">
              <div class="row">
                <h2>{o.name}</h2>
                <span class="badge brand">{o.role}</span>
                {o.personal ? <span class="badge">Personal</span> : null}
                {o.primary ? <span class="badge ok">Primary</span> : null}
                {o.locked ? <span class="badge danger">Locked</span> : null}
              </div>
              <p class="muted mono">{o.slug}</p>
              {o.description ? <p>{o.description}</p> : null}
              <span class="more">Members and teams →</span>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

function CreateOrg({ onCreated }: { onCreated: (o: Org) => void }) {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { me } = useSession();
  const upgrade = error instanceof ApiError && error.status === 403 && error.body.code === 'upgrade_required';
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, string> = { name };
      if (slug.trim()) body.slug = slug.trim();
      if (description.trim()) body.description = description;
      onCreated(await post<Org>('/v1/orgs', body));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card stack create-form" onSubmit={(e) => void submit(e)} data-testid="org-form">
      <h2>New organization</h2>
      {upgrade ? (
        <div class="alert info upgrade" role="alert" data-testid="upgrade-required">
          <strong>Upgrade required.</strong> Organizations beyond your personal one come with the Agency plan (one organization, 5 teams of up to 25 members) and the
          Enterprise plan (no limits).{' '}
          {me.admin ? (
            <>
              You administer this instance: <a href="/app/admin" data-testid="upgrade-admin-link">change your plan on the administration page</a>.
            </>
          ) : (
            'Ask your Muster administrator to change your plan.'
          )}
        </div>
      ) : (
        <ErrorAlert error={error} />
      )}
      <div class="grid-2">
        <div class="field">
          <label for="org-name">Name</label>
          <input id="org-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <FieldError error={error} name="name" />
        </div>
        <div class="field">
          <label for="org-slug">Slug</label>
          <input id="org-slug" value={slug} placeholder="made from the name" onInput={(e) => setSlug(e.currentTarget.value)} />
          <FieldError error={error} name="slug" />
        </div>
      </div>
      <div class="field">
        <label for="org-description">Description</label>
        <textarea id="org-description" class="short" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </div>
      <div class="row">
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create organization'}
        </button>
      </div>
    </form>
  );
}
