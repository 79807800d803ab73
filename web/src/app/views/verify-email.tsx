// The link of the "confirm your email address" email, /verify-email?email=...&code=... (sent at
// registration and on a resend, src/modules/users/email-verification.ts). The page asks for one
// click before it spends the code: mail scanners open links on their own, and a code they used up
// would leave the person with a dead link. A used or expired link offers a new email.
import { useState } from 'preact/hooks';
import { ApiError, post } from '../../lib/api';
import { ErrorAlert } from '../ui';

type Step = 'ready' | 'busy' | 'confirmed' | 'expired' | 'resent';

function linkParams(): { email: string; code: string } {
  const q = new URLSearchParams(location.search);
  return { email: (q.get('email') ?? '').trim().slice(0, 254), code: (q.get('code') ?? '').trim() };
}

export function VerifyEmailView() {
  const [{ email, code }] = useState(linkParams);
  const complete = email !== '' && /^\d{6}$/.test(code);
  const [step, setStep] = useState<Step>(complete ? 'ready' : 'expired');
  const [error, setError] = useState<unknown>(null);

  const confirm = async () => {
    setStep('busy');
    setError(null);
    try {
      await post('/v1/auth/verify-email', { email, code });
      setStep('confirmed');
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 422)) setStep('expired');
      else {
        setError(err);
        setStep('ready');
      }
    }
  };
  const resend = async () => {
    setError(null);
    try {
      await post('/v1/auth/verify-email/resend', { email });
      setStep('resent');
    } catch (err) {
      setError(err);
    }
  };

  return (
    <main class="login-page" id="main">
      <div class="login-card card stack" data-testid="verify-email-page">
        <div class="login-brand">
          <img src="/icon.svg" alt="" width="40" height="40" />
          <div>
            <h1>Confirm your email address</h1>
          </div>
        </div>
        <ErrorAlert error={error} />
        {step === 'ready' || step === 'busy' ? (
          <>
            <p>
              Confirm <strong>{email}</strong> as the address of your Muster account.
            </p>
            <button type="button" onClick={() => void confirm()} disabled={step === 'busy'} data-testid="verify-confirm">
              {step === 'busy' ? 'Confirming…' : 'Confirm my address'}
            </button>
          </>
        ) : null}
        {step === 'confirmed' ? (
          <div class="alert success" role="status" data-testid="verify-done">
            <p>
              <strong>{email}</strong> is confirmed. Invitations to this address are now open to you.
            </p>
            <p>
              <a href="/app/incidents">Continue to Muster</a>
            </p>
          </div>
        ) : null}
        {step === 'expired' ? (
          <div class="stack" data-testid="verify-expired">
            <p role="status">This link has expired or was already used{email ? '' : ', or it is incomplete'}.</p>
            {email ? (
              <button type="button" class="secondary" onClick={() => void resend()}>
                Email me a new link
              </button>
            ) : (
              <a href="/app/login">Sign in</a>
            )}
          </div>
        ) : null}
        {step === 'resent' ? (
          <p role="status" data-testid="verify-resent">
            If {email} still needs confirming, a new link is on its way. It works for 24 hours.
          </p>
        ) : null}
      </div>
    </main>
  );
}
