// The invite acceptance page at /invites/<token> (the link of an org invite email): says which org
// invites which address as what, then joins it: create the account (the link proves the address,
// so no confirmation code is needed), or sign in as that address, or accept at once when already
// signed in as it. Afterwards the field terminal sends to that org (see web/src/field/main.tsx).
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, post } from '../../lib/api';
import { browserZone } from '../../lib/format';
import type { Me } from '../types';
import { ErrorAlert, FieldError, Loading } from '../ui';

interface Invite {
  org: { name: string; slug: string };
  email: string;
  role: string;
  expires_at: string;
}
interface Accepted {
  org: { id: number; name: string; slug: string };
  role: string;
}

/** Where the field terminal and the dashboard send and show by default: the org just joined. */
function rememberOrg(id: number) {
  try {
    localStorage.setItem('muster-field-org', String(id));
    localStorage.setItem('muster-dashboard-org', String(id));
  } catch {
    /* a default only */
  }
}

type State = { step: 'loading' } | { step: 'invalid' } | { step: 'error'; error: unknown } | { step: 'ready'; invite: Invite; me: Me | null } | { step: 'joined'; joined: Accepted };

async function load(token: string): Promise<State> {
  let invite: Invite;
  try {
    invite = await get<Invite>(`/v1/invites/${encodeURIComponent(token)}`);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 422)) return { step: 'invalid' };
    return { step: 'error', error: err };
  }
  try {
    return { step: 'ready', invite, me: await get<Me>('/v1/auth/me') };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return { step: 'ready', invite, me: null };
    return { step: 'error', error: err };
  }
}

function Frame({ children }: { children: ComponentChildren }) {
  return (
    <main class="login-page" id="main">
      <div class="login-card card stack" data-testid="invite-page">
        <div class="login-brand">
          <img src="/icon.svg" alt="" width="40" height="40" />
          <div>
            <h1>Join your team on Muster</h1>
          </div>
        </div>
        {children}
      </div>
    </main>
  );
}

export function InviteView({ token }: { token: string }) {
  const [state, setState] = useState<State>({ step: 'loading' });
  const [mode, setMode] = useState<'register' | 'signin'>('register');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    void load(token).then(setState);
  }, [token]);

  if (state.step === 'loading')
    return (
      <Frame>
        <Loading label="Opening your invite" />
      </Frame>
    );
  if (state.step === 'invalid')
    return (
      <Frame>
        <div class="alert error" role="alert" data-testid="invite-invalid">
          This invite link is not valid any more: it was used, withdrawn, or is older than 14 days. Ask the person who invited you to send a new one.
        </div>
        <a class="button secondary block" href="/app/login">
          Sign in to Muster
        </a>
      </Frame>
    );
  if (state.step === 'error')
    return (
      <Frame>
        <ErrorAlert error={state.error} />
        <button type="button" onClick={() => location.reload()}>
          Try again
        </button>
      </Frame>
    );
  if (state.step === 'joined') {
    const { joined } = state;
    return (
      <Frame>
        <div class="alert success" role="status" data-testid="invite-joined">
          You are now a {joined.role} of <strong>{joined.org.name}</strong>.
        </div>
        <p>On a phone in the field, open the field terminal: your position, notes and photos go to {joined.org.name}.</p>
        <a class="button block" href="/field" data-testid="invite-open-field">
          Open the field terminal
        </a>
        <a class="button secondary block" href="/app/incidents" data-testid="invite-open-dashboard">
          Open the dashboard
        </a>
      </Frame>
    );
  }

  const { invite, me } = state;
  const run = async (f: () => Promise<Accepted>) => {
    setBusy(true);
    setError(null);
    try {
      const joined = await f();
      rememberOrg(joined.org.id);
      setState({ step: 'joined', joined });
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? new Error('Wrong password for this address.') : err);
    } finally {
      setBusy(false);
    }
  };
  const accept = () => post<Accepted>(`/v1/invites/${encodeURIComponent(token)}/accept`);
  const register = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await post('/v1/users', { name, email: invite.email, password, timezone: browserZone(), invite_token: token });
      await post('/v1/auth/login', { email: invite.email, password });
      // Registering through the link proves the address, which accepts the invite: the org is in the
      // list. Should it not be (the invite was accepted otherwise meanwhile), accept it through the link.
      const { orgs } = await get<{ orgs: { id: number; name: string; slug: string; role: string }[] }>('/v1/orgs');
      const org = orgs.find((o) => o.slug === invite.org.slug);
      return org ? { org: { id: org.id, name: org.name, slug: org.slug }, role: org.role } : accept();
    });
  };
  const signIn = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await post('/v1/auth/login', { email: invite.email, password });
      return accept();
    });
  };

  const offer = (
    <p data-testid="invite-offer">
      <strong>{invite.org.name}</strong> invites <strong>{invite.email}</strong> to join as {invite.role === 'admin' ? 'an admin' : `a ${invite.role}`}.
    </p>
  );

  if (me && me.email === invite.email)
    return (
      <Frame>
        {offer}
        <ErrorAlert error={error} />
        <button type="button" class="block" data-testid="invite-accept" disabled={busy} onClick={() => void run(accept)}>
          {busy ? 'Joining…' : `Join ${invite.org.name}`}
        </button>
      </Frame>
    );
  if (me)
    return (
      <Frame>
        {offer}
        <div class="alert info" data-testid="invite-other-account">
          You are signed in as {me.email}. This invite is for {invite.email}: sign out, then open the link again.
        </div>
        <button
          type="button"
          class="secondary block"
          onClick={() =>
            void post('/v1/auth/logout')
              .catch(() => undefined)
              .then(() => location.reload())
          }
        >
          Sign out
        </button>
      </Frame>
    );

  return (
    <Frame>
      {offer}
      <div class="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={mode === 'register'} class={mode === 'register' ? 'tab active' : 'tab'} onClick={() => (setMode('register'), setError(null))}>
          I am new to Muster
        </button>
        <button type="button" role="tab" aria-selected={mode === 'signin'} class={mode === 'signin' ? 'tab active' : 'tab'} onClick={() => (setMode('signin'), setError(null))}>
          I have an account
        </button>
      </div>
      <ErrorAlert error={error} />
      <form class="stack" onSubmit={mode === 'register' ? register : signIn} data-testid={mode === 'register' ? 'invite-register-form' : 'invite-signin-form'}>
        <div class="field">
          <label for="invite-email">Email</label>
          <input id="invite-email" type="email" autocomplete="username" value={invite.email} readOnly aria-describedby="invite-email-help" />
          <small id="invite-email-help">The address this invite was sent to.</small>
        </div>
        {mode === 'register' && (
          <div class="field">
            <label for="invite-name">Your name</label>
            <input id="invite-name" autocomplete="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
            <FieldError error={error} name="name" />
          </div>
        )}
        <div class="field">
          <label for="invite-password">{mode === 'register' ? 'Choose a password' : 'Password'}</label>
          <input
            id="invite-password"
            type="password"
            autocomplete={mode === 'register' ? 'new-password' : 'current-password'}
            minLength={mode === 'register' ? 8 : undefined}
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          {mode === 'register' && <small>At least 8 characters.</small>}
          <FieldError error={error} name="password" />
        </div>
        <button type="submit" class="block" data-testid="invite-submit" disabled={busy}>
          {busy ? 'Joining…' : mode === 'register' ? `Create account and join ${invite.org.name}` : `Sign in and join ${invite.org.name}`}
        </button>
      </form>
    </Frame>
  );
}
