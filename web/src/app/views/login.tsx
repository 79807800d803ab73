// Sign in with a password or an emailed six-digit code, or create an account.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, post } from '../../lib/api';
import { browserZone } from '../../lib/format';
import { ErrorAlert, FieldError } from '../ui';

type Mode = 'password' | 'code' | 'register';

/** The emailed link (/login/magic, redirected to /app/login) carries the email and code: prefilled, one click to sign in. */
function emailedLink(): { email: string; code: string } | null {
  const q = new URLSearchParams(location.search);
  const email = q.get('email') ?? '';
  const code = q.get('code') ?? '';
  return email && /^\d{6}$/.test(code) ? { email, code } : null;
}

/**
 * `/register?email=...`, the link of the invite emails sent before invite links (`/invites/<token>`)
 * existed: the registration form with the invited address filled in.
 */
function registrationLink(): { email: string } | null {
  if (location.pathname.replace(/\/+$/, '') !== '/register') return null;
  return { email: new URLSearchParams(location.search).get('email')?.trim().slice(0, 254) ?? '' };
}

export function LoginView({ onSignedIn }: { onSignedIn: (to?: string) => Promise<void> }) {
  const [link] = useState(emailedLink);
  const [registration] = useState(registrationLink);
  const [mode, setMode] = useState<Mode>(link ? 'code' : registration ? 'register' : 'password');
  const [email, setEmail] = useState(link?.email ?? registration?.email ?? '');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [code, setCode] = useState(link?.code ?? '');
  const [codeSent, setCodeSent] = useState(link !== null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [firstRun, setFirstRun] = useState(false);
  // A fresh instance (no account yet) opens on "Create account": the first account is its admin.
  useEffect(() => {
    if (link || registration) return;
    void get<{ first_run?: boolean }>('/v1/web/config')
      .then((c) => {
        if (!c.first_run) return;
        setFirstRun(true);
        setMode((m) => (m === 'password' ? 'register' : m));
      })
      .catch(() => undefined);
  }, []);

  const run = async (f: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? new Error(mode === 'code' ? 'That code is wrong or has expired. Ask for a new one.' : 'Wrong email or password.') : err);
    } finally {
      setBusy(false);
    }
  };

  const login = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await post('/v1/auth/login', { email, password });
      await onSignedIn();
    });
  };
  const sendCode = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await post('/v1/auth/magic-link', { email });
      setCodeSent(true);
      setNotice(`If ${email} has an account, a six-digit code is on its way. It works for 10 minutes.`);
    });
  };
  const verify = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await post('/v1/auth/magic-link/verify', { email, code: code.trim() });
      await onSignedIn();
    });
  };
  const register = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await post('/v1/users', { name, email, password, timezone: browserZone() });
      await post('/v1/auth/login', { email, password });
      // A registration invited with ?next= goes on there; otherwise the welcome page says where the confirmation went.
      await onSignedIn(new URLSearchParams(location.search).get('next') ? undefined : '/app/welcome');
    });
  };
  const switchTo = (m: Mode) => {
    setMode(m);
    setError(null);
    setNotice('');
    setCodeSent(false);
    setCode('');
  };

  return (
    <main class="login-page">
      <div class="login-card card">
        <div class="login-brand">
          <img src="/icon.svg" alt="" width="40" height="40" />
          <div>
            <h1>Muster</h1>
            <p class="muted">Field signals, incidents and bookings in one place.</p>
          </div>
        </div>
        <div class="tabs" role="tablist">
          <button type="button" role="tab" aria-selected={mode !== 'register'} class={mode !== 'register' ? 'tab active' : 'tab'} onClick={() => switchTo('password')}>
            Sign in
          </button>
          <button type="button" role="tab" aria-selected={mode === 'register'} class={mode === 'register' ? 'tab active' : 'tab'} onClick={() => switchTo('register')}>
            Create account
          </button>
        </div>

        {firstRun && mode === 'register' ? (
          <div class="alert info" data-testid="first-run">
            <strong>A new Muster.</strong> Nobody has an account yet: create the first one. It becomes this instance’s administrator.
          </div>
        ) : null}
        {notice ? <div class="alert info">{notice}</div> : null}
        <ErrorAlert error={error} />

        {mode === 'password' ? (
          <form class="stack" onSubmit={login} data-testid="login-form">
            <div class="field">
              <label for="login-email">Email</label>
              <input id="login-email" name="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
              <FieldError error={error} name="email" />
            </div>
            <div class="field">
              <label for="login-password">Password</label>
              <input id="login-password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
              <FieldError error={error} name="password" />
            </div>
            <button type="submit" class="block" disabled={busy}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
            <button type="button" class="ghost block" onClick={() => switchTo('code')}>
              Email me a sign-in code instead
            </button>
          </form>
        ) : null}

        {mode === 'code' ? (
          !codeSent ? (
            <form class="stack" onSubmit={sendCode} data-testid="code-request-form">
              <div class="field">
                <label for="code-email">Email</label>
                <input id="code-email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
                <FieldError error={error} name="email" />
              </div>
              <button type="submit" class="block" disabled={busy}>
                {busy ? 'Sending…' : 'Email me a code'}
              </button>
              <button type="button" class="ghost block" onClick={() => switchTo('password')}>
                Use my password
              </button>
            </form>
          ) : (
            <form class="stack" onSubmit={verify} data-testid="code-verify-form">
              <div class="field">
                <label for="code-input">Six-digit code</label>
                <input
                  id="code-input"
                  class="code-input"
                  inputMode="numeric"
                  autocomplete="one-time-code"
                  pattern="[0-9]{6}"
                  maxLength={6}
                  required
                  value={code}
                  onInput={(e) => setCode(e.currentTarget.value.replace(/\D/g, ''))}
                />
                <FieldError error={error} name="code" />
              </div>
              <button type="submit" class="block" disabled={busy || code.length !== 6}>
                {busy ? 'Checking…' : 'Sign in'}
              </button>
              <button type="button" class="ghost block" onClick={() => setCodeSent(false)}>
                Send a new code
              </button>
            </form>
          )
        ) : null}

        {mode === 'register' ? (
          <form class="stack" onSubmit={register} data-testid="register-form">
            <div class="field">
              <label for="reg-name">Your name</label>
              <input id="reg-name" autocomplete="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
              <FieldError error={error} name="name" />
            </div>
            <div class="field">
              <label for="reg-email">Email</label>
              <input id="reg-email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
              <FieldError error={error} name="email" />
            </div>
            <div class="field">
              <label for="reg-password">Password</label>
              <input id="reg-password" type="password" autocomplete="new-password" minLength={8} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
              <small>At least 8 characters.</small>
              <FieldError error={error} name="password" />
            </div>
            <p class="muted small-print">Your time zone is set to {browserZone()}; change it later in Settings.</p>
            <button type="submit" class="block" disabled={busy}>
              {busy ? 'Creating your account…' : 'Create account'}
            </button>
          </form>
        ) : null}
      </div>
    </main>
  );
}
