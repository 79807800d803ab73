// The dashboard (/app/...): signs in, then routes between the views on the client.
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import '../styles/base.css';
import './app.css';
import { ApiError, get, pageHeaders, post } from '../lib/api';
import { Layout } from './layout';
import { interceptLinks, navigate, safeNext, useLocation } from './router';
import { Routes } from './routes';
import { SessionContext, storedOrgId, storeOrgId, viewingTestData, type Session } from './session';
import type { Me, Org } from './types';
import { ErrorAlert, Loading } from './ui';
import { LoginView } from './views/login';
import { InviteView } from './views/invite';
import { VerifyEmailView } from './views/verify-email';

type Auth = { state: 'loading' } | { state: 'out' } | { state: 'in'; me: Me; orgs: Org[] } | { state: 'error'; error: unknown };

async function loadSession(): Promise<Auth> {
  try {
    const me = await get<Me>('/v1/auth/me');
    const { orgs } = await get<{ orgs: Org[] }>('/v1/orgs');
    return { state: 'in', me, orgs };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return { state: 'out' };
    return { state: 'error', error: err };
  }
}

function App() {
  const loc = useLocation();
  const [auth, setAuth] = useState<Auth>({ state: 'loading' });
  const [orgId, setOrgIdState] = useState<number | null>(storedOrgId);

  useEffect(() => {
    void loadSession().then(setAuth);
  }, []);

  /** After signing in: `?next=` (or `to`, the welcome page of a new account), else the incidents. */
  const signedIn = useCallback(async (to?: string) => {
    const next = await loadSession();
    setAuth(next);
    if (next.state === 'in') navigate(to ?? safeNext(new URLSearchParams(location.search).get('next'), '/app/incidents'), { replace: true });
  }, []);

  const session = useMemo<Session | null>(() => {
    if (auth.state !== 'in') return null;
    const valid = orgId !== null && auth.orgs.some((o) => o.id === orgId) ? orgId : null;
    return {
      me: auth.me,
      orgs: auth.orgs,
      orgId: valid,
      setOrgId: (id) => {
        storeOrgId(id);
        setOrgIdState(id);
      },
      reloadOrgs: async () => {
        const { orgs } = await get<{ orgs: Org[] }>('/v1/orgs');
        setAuth((a) => (a.state === 'in' ? { ...a, orgs } : a));
      },
      signOut: async () => {
        try {
          await post('/v1/auth/logout');
        } finally {
          setAuth({ state: 'out' });
          navigate('/app/login', { replace: true });
        }
      },
    };
  }, [auth, orgId]);

  if (auth.state === 'loading') {
    return (
      <main class="center">
        <Loading label="Loading Muster" />
      </main>
    );
  }
  if (auth.state === 'error') {
    return (
      <main class="center">
        <div class="card narrow stack">
          <h1>Muster could not load</h1>
          <ErrorAlert error={auth.error} />
          <button type="button" onClick={() => location.reload()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (auth.state === 'out' || !session) return <LoginView onSignedIn={signedIn} />;
  if (loc.path === '/app' || loc.path === '/app/login' || loc.path === '/register') {
    // Signed in already: the login page, the registration link and the bare /app go on to the next page.
    queueMicrotask(() => navigate(safeNext(loc.query.get('next'), '/app/incidents'), { replace: true }));
    return null;
  }
  return (
    <SessionContext.Provider value={session}>
      <Layout>
        <Routes loc={loc} />
      </Layout>
    </SessionContext.Provider>
  );
}

interceptLinks();
if (viewingTestData()) pageHeaders['x-muster-mode'] = 'test';
// An invite email's link, /invites/<token>, is served by this page too (before any sign-in).
const inviteToken = /^\/invites\/([^/]+)\/?$/.exec(location.pathname)?.[1];
// The link of the "confirm your email address" email, /verify-email?email=&code=, too (signed in or not).
const verifying = /^\/verify-email\/?$/.test(location.pathname);
render(inviteToken ? <InviteView token={decodeURIComponent(inviteToken)} /> : verifying ? <VerifyEmailView /> : <App />, document.getElementById('root')!);
