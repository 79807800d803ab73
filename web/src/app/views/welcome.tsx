// /app/welcome: where a new account lands after "Create account" (issue 33). It says where the
// confirmation email went; the first account of an instance is told the instance is theirs and may
// set its own plan (plans limit what an account creates; on your own instance you choose).
import { useState } from 'preact/hooks';
import { patch } from '../../lib/api';
import { PlanOptions } from '../plans';
import { useSession } from '../session';
import type { Me } from '../types';
import { ErrorAlert, PageHeader } from '../ui';


function OwnPlan() {
  const { me } = useSession();
  const [plan, setPlan] = useState<string>(me.plan === 'free' ? 'enterprise' : me.plan);
  const [current, setCurrent] = useState<string>(me.plan);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const updated = await patch<Me>(`/v1/users/${me.id}`, { plan });
      // The session's copy of the account: the rest of the dashboard reads the new plan at once.
      Object.assign(me, { plan: updated.plan });
      setCurrent(updated.plan);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card stack" data-testid="welcome-admin" onSubmit={(e) => void save(e)}>
      <h2>This Muster is yours</h2>
      <p>
        You created the first account, so you are this instance's <strong>administrator</strong>: you manage every account, its plan, and the plan new
        registrations start on, on the <a href="/app/admin">Administration</a> page.
      </p>
      <p>
        Plans limit what an account may create: organizations and teams need Agency or Enterprise. On your own instance you choose your plan. Yours is{' '}
        <strong data-testid="welcome-plan">{current}</strong>.
      </p>
      <ErrorAlert error={error} />
      <div class="row">
        <div class="field grow">
          <label for="welcome-plan-select">Your plan</label>
          <select id="welcome-plan-select" data-testid="welcome-plan-select" value={plan} onChange={(e) => setPlan(e.currentTarget.value)}>
            <PlanOptions limits />
          </select>
        </div>
        <button type="submit" class="align-end" disabled={busy || plan === current} data-testid="welcome-plan-save">
          {busy ? 'Saving…' : 'Set my plan'}
        </button>
      </div>
      {current !== 'free' && current === plan ? (
        <p class="saved-note" role="status" data-testid="welcome-plan-saved">
          Your plan is now {current}. <a href="/app/orgs">Create your first organization</a> and invite your team.
        </p>
      ) : null}
    </form>
  );
}

export function WelcomeView() {
  const { me } = useSession();
  return (
    <section class="view welcome" data-testid="welcome">
      <PageHeader title={`Welcome to Muster, ${me.name}`} />
      {!me.email_verified ? (
        <div class="alert info" role="status" data-testid="welcome-email">
          We sent a confirmation email to <strong>{me.email}</strong>. Open its link (or enter its code) to confirm the address: until then you cannot
          join organizations you are invited to.
          {me.admin ? ' If this instance has no mail server yet (SMTP_URL), the email is printed in the server’s log.' : ''}
        </div>
      ) : null}
      {me.admin ? <OwnPlan /> : null}
      <div class="card stack">
        <h2>Next steps</h2>
        <ul class="next-steps">
          <li>
            <a href="/app/orgs">Create an organization</a> and invite your team: alerts, incidents and the live map are shared within it.
          </li>
          <li>
            Open <a href="/field">the field terminal</a> on your phone for beacon mode, photos and alerts.
          </li>
          <li>
            Connect your monitoring on <a href="/app/integrations">Integrations</a>, or offer bookings on <a href="/app/event-types">Event types</a>.
          </li>
        </ul>
        <p>
          <a class="button" href="/app/incidents">
            Go to incidents
          </a>
        </p>
      </div>
    </section>
  );
}
